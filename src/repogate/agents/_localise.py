"""Localisation: rank a repository's files against a task with BM25 (``bm25s``), then show skeletons.

The query is the task's statement and its stated criteria (the task view gives agents no test
names: the failing tests are hidden). Each document is a file's path and text, with identifiers
split at ``_`` and camel case so ``upper_bound`` meets "upper bound". Files are read from the
workspace without following links (:func:`repogate._files.read_tree_files`). Robertson and
Zaragoza's BM25 with ``bm25s``'s defaults (k1 1.5, b 0.75, Lucene's idf).
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import bm25s

from repogate._files import read_tree_files

TEXT_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml")
"""The files localisation reads."""
MAX_FILE_BYTES = 256 * 1024
"""A larger file is left out of the ranking."""
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def _words(text: str) -> str:
    return _CAMEL.sub(" ", text).replace("_", " ")


def read_files(workspace: Path) -> dict[str, str]:
    """Return ``{relative path: text}`` of the workspace's text files (see the module docstring)."""
    found: dict[str, str] = {}
    for suffix in TEXT_SUFFIXES:
        for path, data in read_tree_files(workspace, suffix):
            if len(data) <= MAX_FILE_BYTES and not any(p.startswith(".") for p in path.split("/")):
                try:
                    found[path] = data.decode("utf-8")
                except UnicodeDecodeError:
                    continue
    return dict(sorted(found.items()))


def rank(files: dict[str, str], query: str, k: int) -> list[tuple[str, float]]:
    """Return the ``k`` files best matching ``query`` by BM25, best first, with their scores.

    Files scoring 0 come last, in path order; an empty ``files`` gives an empty list.
    """
    paths = list(files)
    if not paths:
        return []
    corpus = bm25s.tokenize(
        [_words(f"{path}\n{files[path]}") for path in paths], stopwords="en", show_progress=False
    )
    retriever = bm25s.BM25()
    retriever.index(corpus, show_progress=False)
    asked = bm25s.tokenize([_words(query)], stopwords="en", show_progress=False)
    if not asked.vocab:
        return [(path, 0.0) for path in paths[:k]]
    docs, scores = retriever.retrieve(asked, k=min(k, len(paths)), show_progress=False)
    ranked = [(paths[int(d)], float(s)) for d, s in zip(docs[0], scores[0], strict=True)]
    return sorted(ranked, key=lambda item: (-item[1], item[0]))


def skeleton(path: str, text: str, max_lines: int = 60) -> str:
    """The file's classes and functions with their line numbers (Python), else its first lines."""
    if path.endswith((".py", ".pyi")):
        try:
            tree = ast.parse(text)
        except (SyntaxError, ValueError):
            tree = None
        if tree is not None:
            lines = [
                f"{node.lineno}: {'class' if isinstance(node, ast.ClassDef) else 'def'} {node.name}"
                for node in ast.walk(tree)
                if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)
            ]
            return "\n".join(sorted(lines, key=lambda s: int(s.split(":")[0]))[:max_lines])
    return "\n".join(text.splitlines()[:max_lines])

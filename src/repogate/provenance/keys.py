"""Ed25519 key pairs for signing verdicts: make one, read a private key, read a public key.

Keys are handled by ``securesystemslib`` (https://github.com/secure-systems-lab/securesystemslib),
which signs offline with pyca/cryptography. A private key is a PEM PKCS#8 file (what
``CryptoSigner.private_bytes`` writes) read from a file or from an environment variable; its bytes
are never printed, logged or written anywhere but the file :func:`generate` makes (mode 0600).
A public key is the securesystemslib key JSON (``keyid``, ``keytype``, ``scheme``, ``keyval``) or
a PEM ``PUBLIC KEY``.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Literal

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey
from cryptography.hazmat.primitives.serialization import load_pem_private_key, load_pem_public_key
from securesystemslib.signer import CryptoSigner, SSlibKey

from repogate._folders import not_a_folder
from repogate._locks import write_atomic
from repogate.errors import SigningKeyError

__all__ = ["PRIVATE_FILE", "PUBLIC_FILE", "generate", "load_public_key", "load_signer"]

PRIVATE_FILE = "repogate-signing.key"
PUBLIC_FILE = "repogate-signing.pub.json"
ENV_PREFIX = "env:"
_FIX_PRIVATE = (
    "give --sign-key FILE (a PEM ed25519 private key from `repogate keygen`) or "
    "--sign-key env:NAME (a variable holding that PEM text)"
)
_FIX_PUBLIC = "give --key FILE, the .pub.json `repogate keygen` wrote beside the private key"


def generate(out: Path) -> tuple[Path, Path]:
    """Make an ed25519 key pair in ``out``: ``repogate-signing.key`` (0600) and ``.pub.json``.

    Args:
        out: the folder (made when missing).

    Returns:
        The private key's path and the public key's path.

    Raises:
        SigningKeyError: ``out`` is a file or lies below one, either key file exists already
            (never overwritten), or the folder or a key file cannot be written (the OS error named).
    """
    if (why := not_a_folder(out)) is not None:
        raise SigningKeyError(f"--out {out} {why}", "give a folder for the key pair")
    private, public = out / PRIVATE_FILE, out / PUBLIC_FILE
    taken = [str(p) for p in (private, public) if p.exists() or p.is_symlink()]
    if taken:
        raise SigningKeyError(
            f"{' and '.join(taken)} exist already",
            "give another --out folder; a key is never overwritten",
        )
    signer = CryptoSigner.generate_ed25519()
    key = signer.public_key
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_atomic(public, json.dumps({"keyid": key.keyid, **key.to_dict()}, indent=2) + "\n")
        public.chmod(0o644)  # a public key is for anyone who verifies
        fd = os.open(private, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as handle:
            handle.write(signer.private_bytes)
    except OSError as exc:
        raise SigningKeyError(
            f"cannot write the key pair in --out {out} ({exc.strerror or exc})",
            "give a folder you can write",
        ) from None
    return private, public


def _private_pem(source: str) -> tuple[bytes, str]:
    """Return the PEM bytes ``source`` names and how messages name it (never the bytes)."""
    if source.startswith(ENV_PREFIX):
        name = source.removeprefix(ENV_PREFIX)
        value = os.environ.get(name)
        if not value:
            raise SigningKeyError(f"environment variable {name} is not set or empty", _FIX_PRIVATE)
        return value.encode(), f"environment variable {name}"
    if "PRIVATE KEY" in source or "\n" in source:  # the key itself: never echo it
        raise SigningKeyError(
            "--sign-key was given a key's text, not where to read it", _FIX_PRIVATE
        )
    path = Path(source)
    try:
        return path.read_bytes(), f"key file {path}"
    except OSError as exc:
        raise SigningKeyError(
            f"key file {path} cannot be read ({exc.strerror})", _FIX_PRIVATE
        ) from None


def load_signer(source: str) -> CryptoSigner:
    """Read an ed25519 private key and return a signer for it.

    Args:
        source: a PEM file's path, or ``env:NAME`` for an environment variable holding the PEM.

    Raises:
        SigningKeyError: the file or variable is missing, is not a PEM private key (a public key
            is said to be one), is encrypted, or is not ed25519; the message names where it
            looked, never the key.
    """
    pem, where = _private_pem(source)
    if _key_kind(pem) == "public":
        raise SigningKeyError(
            f"{where} is a public key, not the private one that signs", _FIX_PRIVATE
        )
    try:
        key = load_pem_private_key(pem, password=None)
    except (ValueError, TypeError):
        raise SigningKeyError(
            f"{where} is not an unencrypted PEM private key", _FIX_PRIVATE
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise SigningKeyError(f"{where} holds a {type(key).__name__}, not ed25519", _FIX_PRIVATE)
    return CryptoSigner(key)


def load_public_key(path: Path) -> SSlibKey:
    """Read a public key: securesystemslib key JSON (with ``keyid``) or a PEM ``PUBLIC KEY``.

    Raises:
        SigningKeyError: the file is missing, unreadable, or not an ed25519 public key; a private
            key (PEM, or key JSON with ``keyval.private``) is said to be one, never echoed.
    """
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SigningKeyError(
            f"key file {path} cannot be read ({exc.strerror})", _FIX_PUBLIC
        ) from None
    if _key_kind(data) == "private":
        raise SigningKeyError(
            f"key file {path} is a private key, not a public one (keep it secret)",
            "give --key the public key: the .pub.json `repogate keygen` wrote beside it",
        )
    if data.lstrip().startswith(b"-----BEGIN"):
        return _from_pem(path, data)
    try:
        raw = json.loads(data)
        keyid = raw.pop("keyid")
        key = SSlibKey.from_dict(keyid, raw)
        computed = SSlibKey.from_crypto(key._crypto_key()).keyid
    except (ValueError, KeyError, TypeError, AttributeError):
        raise SigningKeyError(
            f"key file {path} is not a public key (JSON with keyid, keytype, scheme, keyval)",
            _FIX_PUBLIC,
        ) from None
    if key.keytype != "ed25519" or key.scheme != "ed25519":
        raise SigningKeyError(
            f"key file {path} holds a {key.keytype} key, not ed25519", _FIX_PUBLIC
        )
    if key.keyid != computed:
        raise SigningKeyError(f"key file {path}: its keyid does not match its key", _FIX_PUBLIC)
    return key


def _key_kind(data: bytes) -> Literal["private", "public"] | None:
    """Say whether ``data`` is a private key, a public key, or neither.

    Private: a PEM ``... PRIVATE KEY`` block (PKCS#8, encrypted, OpenSSH, RSA, EC), or
    securesystemslib key JSON holding ``keyval.private``. Public: a PEM ``PUBLIC KEY`` block, or
    key JSON with a ``keyval`` and no private part.
    """
    if data.lstrip().startswith(b"-----BEGIN"):
        if b"PRIVATE KEY-----" in data:
            return "private"
        return "public" if b"PUBLIC KEY-----" in data else None
    try:
        raw = json.loads(data)
    except ValueError:
        return None
    keyval = raw.get("keyval") if isinstance(raw, dict) else None
    if not isinstance(keyval, dict):
        return None
    return "private" if keyval.get("private") else "public"


def _from_pem(path: Path, data: bytes) -> SSlibKey:
    try:
        key = load_pem_public_key(data)
    except ValueError:
        raise SigningKeyError(f"key file {path} is not a PEM public key", _FIX_PUBLIC) from None
    if not isinstance(key, Ed25519PublicKey):
        raise SigningKeyError(
            f"key file {path} holds a {type(key).__name__}, not ed25519", _FIX_PUBLIC
        )
    return SSlibKey.from_crypto(key)

"""Write sdk/settings.py from spec/client.json. Run from the repository root."""

import json
from pathlib import Path

spec = json.loads(Path("spec/client.json").read_text(encoding="utf-8"))
lines = ['"""Client settings."""', ""]
lines += [f"{name.upper()} = {value!r}" for name, value in sorted(spec.items())]
Path("sdk/settings.py").write_text("\n".join(lines) + "\n", encoding="utf-8")

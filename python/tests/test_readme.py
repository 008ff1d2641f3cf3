"""The README's Python example runs as it stands there."""

import pathlib
import re
import runpy

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"


def test_the_readme_example_runs(tmp_path, monkeypatch, capsys):
    section = README.read_text().split("## Python\n", 1)[1]
    code = re.search(r"```python\n(.*?)```", section, re.S).group(1)
    script = tmp_path / "example.py"
    script.write_text(code)
    monkeypatch.chdir(tmp_path)
    runpy.run_path(str(script), run_name="__main__")
    out = capsys.readouterr().out
    assert "softmax: test accuracy" in out and "mlp: test accuracy" in out
    assert (tmp_path / "digits.ckpt").exists()

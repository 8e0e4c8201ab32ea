"""The notebooks run from top to bottom without a cell error, on the shipped sample and the
knowledge built once for the test run (so no kernel starts Spark)."""

from pathlib import Path

import nbformat
import pytest
from nbclient import NotebookClient

NOTEBOOKS = Path(__file__).resolve().parents[3] / "notebooks"
NAMES = ["01_blizzard_replay", "02_blizzard_map", "03_knowledge_sparql"]


def _outputs(notebook: nbformat.NotebookNode) -> tuple[str, int]:
    """All text the cells printed or returned, and the number of images shown."""
    text, images = [], 0
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            text.append(output.get("text", ""))
            data = output.get("data", {})
            text.append(data.get("text/plain", ""))
            images += "image/png" in data
    return "\n".join(text), images


@pytest.mark.parametrize("name", NAMES)
def test_notebook_runs(
    name: str, sample_store: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BLIZZARD_STORE", str(sample_store))
    monkeypatch.setenv("BLIZZARD_OUT", str(tmp_path))
    notebook = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    client = NotebookClient(
        notebook, timeout=300, kernel_name="python3", resources={"metadata": {"path": tmp_path}}
    )
    client.execute()  # raises CellExecutionError on the first failing cell
    text, images = _outputs(notebook)
    if name == "01_blizzard_replay":
        assert "KOGD  KOGD KSLC KEVW  2021-01-11 04:40  2021-01-11 11:00           3" in text
        assert images == 1
    elif name == "02_blizzard_map":
        assert "Salt Lake City" in text and images == 1
        assert (tmp_path / "map.png").stat().st_size > 0
    else:
        assert "('KSLC', 'Salt Lake City International Airport'" in text
        assert "('Salt Lake City', '7.937')" in text


def test_every_notebook_is_tested() -> None:
    assert sorted(p.stem for p in NOTEBOOKS.glob("*.ipynb")) == NAMES

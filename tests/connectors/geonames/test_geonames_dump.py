"""The GeoNames dump reader: plain, gzip and zip files, errors, the synthetic generator."""

import gzip
import zipfile
from pathlib import Path

import pytest

from connectors.geonames import COLUMNS, geonames_iri, read_dump
from connectors.geonames.synthetic import FIRST_ID, write_synthetic_dump
from reasoner.errors import KnowledgeError

ROOT = Path(__file__).resolve().parents[3]
SAMPLE = ROOT / "data" / "geonames" / "US-mountain-cities15000.txt"


def test_shipped_sample_is_the_mountain_states() -> None:
    features = list(read_dump(SAMPLE))
    assert len(features) == 123
    assert {f.admin1_code for f in features} == {"UT", "CO", "WY", "ID", "MT"}
    slc = next(f for f in features if f.name == "Salt Lake City")
    assert slc.geonameid == 5780993
    assert (slc.feature_class, slc.feature_code, slc.country_code) == ("P", "PPLA", "US")
    assert slc.population > 100_000


def test_gzip_and_zip_read_like_the_plain_file(tmp_path: Path) -> None:
    text = SAMPLE.read_text(encoding="utf-8")
    gz = tmp_path / "US.txt.gz"
    with gzip.open(gz, "wt", encoding="utf-8") as f:
        f.write(text)
    zipped = tmp_path / "US.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("readme.txt", "GeoNames readme")
        archive.writestr("US.txt", text)
    plain = list(read_dump(SAMPLE))
    assert list(read_dump(gz)) == plain
    assert list(read_dump(zipped)) == plain


def test_zip_with_two_dumps_is_refused(tmp_path: Path) -> None:
    zipped = tmp_path / "two.zip"
    with zipfile.ZipFile(zipped, "w") as archive:
        archive.writestr("a.txt", "")
        archive.writestr("b.txt", "")
    with pytest.raises(KnowledgeError, match="expected one .txt dump"):
        list(read_dump(zipped))


def test_malformed_rows_name_file_and_line(tmp_path: Path) -> None:
    good = SAMPLE.read_text(encoding="utf-8").splitlines()[0]
    file = tmp_path / "bad.txt"
    file.write_text(good + "\n" + "1\tonly three\tcolumns\n")
    with pytest.raises(KnowledgeError) as info:
        list(read_dump(file))
    assert str(info.value) == f"{file}:2: expected 19 tab-separated columns, got 3"
    cols = good.split("\t")
    cols[4] = "north"
    file.write_text("\t".join(cols) + "\n")
    with pytest.raises(KnowledgeError, match=rf"{file}:1: malformed GeoNames row"):
        list(read_dump(file))


def test_missing_file() -> None:
    with pytest.raises(KnowledgeError, match="no such GeoNames file"):
        list(read_dump("/nonexistent/US.txt"))


def test_iri() -> None:
    assert geonames_iri(5780993) == "https://sws.geonames.org/5780993/"


def test_synthetic_dump_has_the_dump_format(tmp_path: Path) -> None:
    a = write_synthetic_dump(tmp_path / "a.txt", 200, seed=5)
    b = write_synthetic_dump(tmp_path / "b.txt.gz", 200, seed=5)
    lines = a.read_text().splitlines()
    assert all(len(line.split("\t")) == len(COLUMNS) for line in lines)
    features = list(read_dump(a))
    assert features == list(read_dump(b))
    assert [f.geonameid for f in features] == list(range(FIRST_ID, FIRST_ID + 200))
    assert {f.feature_code for f in features} >= {"SCH", "HSP", "AIRP"}

"""tools/pack_store.py: a consistent gzipped snapshot of a store in use, that every command
unpacks in a fresh checkout and a rerun resumes from."""

from __future__ import annotations

import sqlite3

from nasrescale.cli.main import main

from pipeline_helpers import one_thread, private_cache, tiny_pipeline  # noqa: F401  (fixtures, used by name)
from tool_helpers import load_tool

def test_a_packed_store_is_read_where_the_store_is_gone_and_a_rerun_adds_nothing(capsys, tmp_path):
    pack = load_tool("pack_store")
    path, results = tmp_path / "tiny.toml", tmp_path / "res"
    path.write_text(tiny_pipeline("packed", archs=("3_11_111", "3_33_333")))
    assert main(["run", str(path), "--results", str(results), "--quiet"]) == 0
    run_dir = results / "packed"
    writer = sqlite3.connect(run_dir / "store.sqlite")  # a store still open for writing (WAL)
    writer.execute("PRAGMA journal_mode=WAL")
    writer.execute("UPDATE meta SET value = 'still running' WHERE key = 'name'")
    writer.commit()
    first = pack.pack_store(run_dir).read_bytes()
    assert pack.pack_store(run_dir).read_bytes() == first  # the same snapshot packs to the same bytes
    writer.close()
    for name in ("store.sqlite", "store.sqlite-wal", "store.sqlite-shm"):
        (run_dir / name).unlink(missing_ok=True)
    capsys.readouterr()
    assert main(["status", "packed", "--results", str(results)]) == 0
    assert "4/4 jobs finished" in capsys.readouterr().out
    with sqlite3.connect(run_dir / "store.sqlite") as db:  # unpacked beside it, with the committed change
        assert db.execute("SELECT value FROM meta WHERE key = 'name'").fetchone() == ("still running",)
    assert main(["run", str(path), "--results", str(results), "--quiet"]) == 0
    assert "(0 new, 0 run now)" in capsys.readouterr().err


def test_a_folder_without_a_store_exits_2(capsys, tmp_path):
    assert load_tool("pack_store").main([str(tmp_path)]) == 2
    assert "no store to pack" in capsys.readouterr().err

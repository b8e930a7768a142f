"""``collect FOLDER``: an output folder, copied back from the GPU machine, taken into the results
root: its store merged into the run's (:func:`nasrescale.store.merge.merge_store`: nothing stored is
lost or overwritten, a job finished in both keeps the stored result and the slice's is listed as a
duplicate), packed as committed runs ship and reported; its text files, and what the merge did
(``collect.json``), into ``gpu_allocations/<start>/``."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any

from .precision import stored_precisions
from .transfer import refuse

__all__ = ["collect", "mixed_precision", "merge_slice"]


def mixed_precision(run_dir: Path, slice_dir: Path) -> str | None:
    """Why the slice's store may not be merged into the run's for its precisions (``None``: it may):
    its finished jobs the run lacks trained in a precision the run's finished jobs did not."""
    held, _ = stored_precisions(run_dir)
    theirs, _ = stored_precisions(slice_dir)
    new = {p for key, p in theirs.items() if key not in held}
    kept = set(held.values())
    if len(kept | new) < 2 or new <= kept:
        return None
    return (f"the slice's new results trained in {', '.join(sorted(new))}, the store's in "
            f"{', '.join(sorted(kept)) or 'nothing'}: one study never mixes precisions; nothing merged")


def merge_slice(slice_dir: Path, results: Path, n_boot: int) -> dict[str, Any] | int:
    """Merge ``slice_dir/store.sqlite`` into its run's store under ``results``, pack it and report the
    run: what the merge did (JSON-ready), or the exit code of a refusal."""
    from nasrescale.cli.main import main as nasrescale
    from nasrescale.errors import DataError
    from nasrescale.store.merge import merge_store
    from nasrescale.store.read import reading, run_dir_for
    from pack_store import pack_store

    with reading(slice_dir) as store:
        run_dir = run_dir_for(store.get_meta("name"), results)
    problem = mixed_precision(run_dir, slice_dir)
    if problem:
        return refuse(f"collect: {slice_dir}: {problem}")
    try:
        merged = merge_store(run_dir / "store.sqlite", slice_dir / "store.sqlite")
    except DataError as err:
        return refuse(f"collect: {err}")
    print(f"collect: merged {slice_dir / 'store.sqlite'} into {run_dir / 'store.sqlite'}: {len(merged.added)} "
          f"job(s) added, {len(merged.filled)} finished that were not, {merged.unchanged} unchanged, "
          f"{merged.visits_added} slice record(s) added, {len(merged.duplicates)} duplicate(s)")
    for dup in merged.duplicates:
        print(f"collect: duplicate {dup['key']} ({dup['arch']}): kept the stored {dup['kept_status']} "
              f"({dup['kept_test_accuracy']}), the slice's {dup['status']} ({dup['test_accuracy']}) is listed in "
              "collect.json")
    if merged.meta_kept:
        print(f"collect: meta kept as stored where the slice's differs: {', '.join(merged.meta_kept)}")
    pack_store(run_dir)
    if nasrescale(["report", run_dir.name, "--results", str(results), "--bootstrap", str(n_boot)]):
        return refuse(f"collect: the store is merged, its report failed (above): `nasrescale report {run_dir}`")
    return {"run": run_dir.name, "slice_store": str(slice_dir / "store.sqlite"), **merged.to_json()}


def collect(out: Path, results: Path, n_boot: int = 1000) -> int:
    """Take an output folder copied back into ``results`` (module docstring); 0, or 2 on a refusal
    (no folder, a store of another run or precision: nothing merged)."""
    if not out.is_dir():
        return refuse(f"collect: no folder {str(out)!r} (the output folder, copied back)")
    summary = json.loads((out / "allocation.json").read_text()) if (out / "allocation.json").is_file() else {}
    target = results / "gpu_allocations" / re.sub(r"[-:]", "", summary.get("started_at", "unknown"))
    merged: dict[str, Any] | int | None = None
    if (out / "reeval" / "store.sqlite").is_file():
        merged = merge_slice(out / "reeval", results, n_boot)
        if isinstance(merged, int):
            return merged
    target.mkdir(parents=True, exist_ok=True)
    for path in sorted(out.rglob("*")):
        if path.is_file() and path.suffix in (".txt", ".json", ".log"):
            shutil.copyfile(path, target / path.name)
    if merged is not None:
        (target / "collect.json").write_text(json.dumps(merged, indent=1, default=str) + "\n", encoding="utf-8")
    print(f"copied the output's text files to {target}; now: git add {results} && git commit")
    return 0

"""Small picklable jobs for the executor tests (imported by worker processes, so no torch).

Each job sleeps ``seconds``, then returns a record naming the process it ran in. ``mode``:
``ok``; ``raise`` (ValueError); ``kill_first`` (SIGKILLs its own process on the first attempt,
which it recognises by the absence of ``marker``, written with its pid at the start); ``kill_always``;
``oom_first`` (fails with an OutOfMemoryError on the first attempt: a worker fault);
``oom_always``;
``epochs`` (calls ``on_epoch`` once, for the executors' test-only kill hook).
"""

from __future__ import annotations

import os
import signal
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any


class OutOfMemoryError(RuntimeError):
    """Stands in for ``torch.OutOfMemoryError`` (same type name, no torch import)."""


@dataclass(frozen=True)
class FakeJob:
    name: str
    weight: float = 1.0
    seconds: float = 0.0
    mode: str = "ok"
    marker: str = ""

    def key(self) -> str:
        return f"fake-{self.name}"

    def cost(self) -> float:
        return self.weight

    def run(self, options: Any) -> dict[str, Any]:
        device, on_epoch = options.device, options.on_epoch
        first = bool(self.marker) and not os.path.exists(self.marker)
        if self.marker:
            Path(self.marker).write_text(str(os.getpid()))  # which process ran it
        if self.mode == "epochs" and on_epoch is not None:
            on_epoch({"epoch": 1})
        time.sleep(self.seconds)
        if self.mode == "raise":
            raise ValueError(f"job {self.name} is broken")
        if self.mode == "kill_always" or (self.mode == "kill_first" and first):
            os.kill(os.getpid(), signal.SIGKILL)
        if self.mode == "oom_always" or (self.mode == "oom_first" and first):
            raise OutOfMemoryError("CUDA out of memory. Tried to allocate 2.00 GiB")
        return {"name": self.name, "pid": os.getpid(), "device": device, "diverged": False,
                "test_accuracy": 10.0}

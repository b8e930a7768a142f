"""A family file's ``imports``: a ``.py`` file relative to the family file's folder, or a module
looked up in that folder first, registers a new op kind (through :mod:`nasrescale.plugins`, the
loader of pipeline and protocol files); a pickled family imports it again where it is unpickled.

The op kinds registered here are removed after each test (other tests list the registries)."""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from nasrescale import plugins
from nasrescale.errors import FamilyError
from nasrescale.space.family_file import read_family_file
from nasrescale.space.ops import OP_KINDS

#: a new op kind and its module: a dilated convolution (``{kind}``: the kind's name)
OP_PLUGIN = """
from torch import nn

from nasrescale.models import register_builder
from nasrescale.space.ops import OpKind, register_op_kind

register_op_kind(OpKind("{kind}", relu_depth=1, parametric=True, needs_kernel=True,
                        description="ReLU -> Conv(kxk, dilation 2) -> BatchNorm"))


@register_builder("{kind}")
def build(op, width):
    k = op.kernel
    return nn.Sequential(nn.ReLU(), nn.Conv2d(width, width, k, padding=k - 1, dilation=2, bias=False),
                         nn.BatchNorm2d(width))
"""

FAMILY = """
[family]
name = "dilated_{kind}"
nodes = 4
encoding = "nb201"
depth_offset = 1
base = "|skip_connect~0|+|none~0|skip_connect~1|+|none~0|none~1|skip_connect~2|"
imports = ["{entry}"]

[[ops]]
name = "none"
kind = "zero"

[[ops]]
name = "skip_connect"
kind = "identity"

[[ops]]
name = "dil_conv_3x3"
kind = "{kind}"
kernel = 3

[macro]
kind = "nb201"
"""

ARCH = "|dil_conv_3x3~0|+|skip_connect~0|dil_conv_3x3~1|+|skip_connect~0|none~1|skip_connect~2|"


@pytest.fixture()
def forget_op_kinds(monkeypatch):
    """The op kinds, builders and plug-in modules a test registers are forgotten after it."""
    from nasrescale.models.builders import BUILDERS

    monkeypatch.setattr(plugins, "_LOADED", {})
    kinds, builders, modules = set(OP_KINDS), set(BUILDERS), set(sys.modules)
    yield lambda: _forget(kinds, builders, modules)
    _forget(kinds, builders, modules)


def _forget(kinds: set[str], builders: set[str], modules: set[str]) -> None:
    """Undo every registration and plug-in import made since (as in a fresh worker process)."""
    from nasrescale.models.builders import BUILDERS

    for name in set(OP_KINDS) - kinds:
        OP_KINDS.remove(name)
    for name in set(BUILDERS) - builders:
        BUILDERS.remove(name)
    for name in set(sys.modules) - modules:
        if name.startswith(("nasrescale_plugin_", "fam_ops_")):
            del sys.modules[name]
    plugins._LOADED.clear()


def _family_file(tmp_path: Path, kind: str, entry: str, module_path: str) -> Path:
    """``fam/mine.toml`` naming ``entry``, with the op kind's module at ``fam/<module_path>``."""
    folder = tmp_path / "fam"
    (folder / module_path).parent.mkdir(parents=True, exist_ok=True)
    (folder / module_path).write_text(OP_PLUGIN.format(kind=kind))
    (folder / "mine.toml").write_text(FAMILY.format(kind=kind, entry=entry))
    return folder / "mine.toml"


#: a family's two forms of ``imports`` entry: a .py file in a subfolder, a module beside the file
FORMS = [("ops/dil_ops.py", "ops/dil_ops.py"), ("fam_ops_dil", "fam_ops_dil.py")]


@pytest.mark.parametrize("entry, module_path", FORMS)
def test_a_family_imports_a_new_op_kind_from_beside_it_and_again_when_unpickled(tmp_path, monkeypatch,
                                                                                 forget_op_kinds, entry, module_path):
    from nasrescale.models import build_model

    kind = "dilconv_" + entry.split("/")[0].replace(".py", "").replace("_", "")
    path = _family_file(tmp_path, kind, entry, module_path)
    (tmp_path / "elsewhere").mkdir()
    monkeypatch.chdir(tmp_path / "elsewhere")  # the family file's folder, not the working one, is searched
    family = read_family_file(path)
    stored = str((tmp_path / "fam" / module_path).resolve()) if entry.endswith(".py") else entry
    assert family.imports == (stored,) and kind in OP_KINDS
    assert family.op("dil_conv_3x3").kind.name == kind
    pickled = pickle.dumps(family)
    forget_op_kinds()  # as in a worker process that never read the file
    assert kind not in OP_KINDS
    again = pickle.loads(pickled)
    assert kind in OP_KINDS and again.digest() == family.digest()
    conv = build_model(ARCH, again, width=4, cells=1).cells()[0].edges["0_1"][1]
    assert type(conv).__name__ == "Conv2d" and conv.dilation == (2, 2)


@pytest.mark.parametrize("entry, source, words", [
    ("gone.py", None, "family.imports: no file 'gone.py'"),
    ("fam_ops_gone", None, "family.imports: 'fam_ops_gone' (searched in"),
    ("broken.py", "raise ValueError('no ops today')", "importing it failed: ValueError: no ops today"),
])
def test_a_family_import_that_fails_names_the_file_and_key(tmp_path, forget_op_kinds, entry, source, words):
    path = _family_file(tmp_path, "never_registered", entry, "unused.py")
    if source is not None:
        (tmp_path / "fam" / entry).write_text(source)
    with pytest.raises(FamilyError) as info:
        read_family_file(path)
    message = str(info.value)
    assert message.startswith(f"{path}: ") and words in message and "\n" not in message, message
    assert "never_registered" not in OP_KINDS


UNPICKLE_BUILD = """
import pickle, sys
from nasrescale.models import build_model
family = pickle.loads(sys.stdin.buffer.read())
conv = build_model(sys.argv[1], family, width=4, cells=1).cells()[0].edges["0_1"][1]
print(type(conv).__name__, *conv.dilation)
"""


@pytest.mark.parametrize("entry, module_path", FORMS)
def test_a_fresh_process_elsewhere_unpickles_the_family(tmp_path, forget_op_kinds, entry, module_path):
    """A worker process in another working folder, with nothing of the family's folder on its path."""
    family = read_family_file(_family_file(tmp_path, "dilconv_fresh", entry, module_path))
    (tmp_path / "elsewhere").mkdir()
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-c", UNPICKLE_BUILD, ARCH], input=pickle.dumps(family),
                          cwd=tmp_path / "elsewhere", env=env, capture_output=True, timeout=300)
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    assert done.stdout.decode().split() == ["Conv2d", "2", "2"]

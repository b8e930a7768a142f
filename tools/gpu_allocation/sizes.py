"""How large each step runs: at full size on a GPU, tiny on the CPU (``--dry-run``), and the seconds a
step would like when steps are named one by one (docs/gpu_allocation.md, "The steps")."""

from __future__ import annotations

__all__ = ["STEPS", "WANT", "KEEP", "DRY_NAME", "DRY_REEVAL", "DRY_BENCH", "FULL_BENCH", "DRY_PARITY", "FULL_PARITY",
           "DRY_MODES", "FULL_MODES", "ENV_PY", "PACK_HINT"]

STEPS = ("env", "bench", "parity", "modes", "reeval")
#: seconds a step would like, and what it is kept when a step before it runs (a dry run keeps 20 s)
WANT = {"env": 150.0, "bench": 330.0, "parity": 330.0, "modes": 300.0}
KEEP = {"env": 60.0, "bench": 240.0, "parity": 240.0, "modes": 180.0, "reeval": 240.0}
DRY_NAME = "gpu_slices_dryrun"
DRY_REEVAL = [f"pipeline.name={DRY_NAME}", "data.name=cifar10-subset", "data.path=", "archs.count=4",
              "budget.width=4", "budget.cells=1", "budget.epochs=1", "budget.train_subset=256",
              "budget.test_subset=200", "executor.jobs_per_gpu=2", "executor.device=cpu"]
DRY_BENCH = ["--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1", "--ks", "2",
             "--jobs-per-gpu", "", "--workers", "0", "--acc-images", "128", "--acc-epochs", "1", "--seeds", "1"]
#: bench within its planned 1.5 minutes: the reference loop, the engine (K = 1) and a cell's fused group (K = 12)
FULL_BENCH = ["--device", "cuda", "--width", "16", "--cells", "5", "--train-images", "10000", "--epochs", "2",
              "--ks", "12", "--jobs-per-gpu", "", "--workers", "8", "--acc-images", "50000",
              "--acc-epochs", "2", "--seeds", "2"]
#: parity within its planned 3 minutes: one run per seed of each arm, 10 seeds, 4 epochs of 5,000
#: images (cosine past its anneal; 40 runs of 20,000 images)
DRY_PARITY = ["--device", "cpu", "--width", "4", "--cells", "1", "--images", "128", "--test-images", "100",
              "--resolution", "8", "--epochs", "4", "--seeds", "3", "--workers", "0", "--control-lr", "0.01"]
FULL_PARITY = ["--device", "cuda", "--width", "16", "--cells", "5", "--images", "5000", "--epochs", "4",
               "--seeds", "10", "--workers", "8", "--control-lr", "0.5"]
#: modes: eager vs torch.compile vs CUDA graphs (reduce-overhead) of the engine and a cell's fused group
#: (network and fused SGD update), in what its planned 1.5 minutes allow
DRY_MODES = ["--device", "cpu", "--width", "4", "--cells", "1", "--train-images", "128", "--epochs", "1", "--ks", "2",
             "--jobs-per-gpu", "", "--workers", "0", "--precisions", "fp32", "--modes", "eager"]
FULL_MODES = ["--device", "cuda", "--width", "16", "--cells", "5", "--train-images", "10000", "--epochs", "2",
              "--ks", "12", "--jobs-per-gpu", "", "--workers", "8", "--precisions", "bf16,fp32",
              "--modes", "eager,graphs,compile"]
#: the software and device lines of env/env.txt
ENV_PY = ("import os, platform, torch; cuda = torch.cuda.is_available(); print(f'python: {platform.python_version()}"
          "\\ntorch: {torch.__version__}\\ntorch CUDA: {torch.version.cuda}\\ncuDNN: {torch.backends.cudnn.version()}"
          "\\nCUDA available: {cuda}\\ndevice: ' + (torch.cuda.get_device_name(0) if cuda else "
          "f'CPU ({platform.machine()}, {os.cpu_count()} cores)'))")
PACK_HINT = "python tools/pack_cifar10.py --src CIFAR10_JPEG_FOLDER --out .data/cifar10.npz"

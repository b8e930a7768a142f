"""Fast batch decoding of encoded image files into one uint8 ``(N, 3, H, W)`` tensor.

JPEGs are decoded in chunks by ``torchvision.io.decode_jpeg`` (libjpeg-turbo; one C++ call
per chunk, which releases the GIL, so chunks decode in parallel threads while the main thread
reads the next files). A chunk holding anything else falls back to ``decode_image`` per file
(PNG, GIF, WebP) and then to Pillow (BMP, PPM, TIFF, ...). Every image is converted to RGB.
All images must have the size of the first one; the first that does not is named in a
:class:`~nasrescale.errors.DataError`. torchvision is imported on first use: importing it takes
seconds, which commands that never decode should not pay.
"""

from __future__ import annotations

import functools
import io
import os
from collections import deque
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Iterator, Sequence

import numpy as np
import torch
from tqdm import tqdm

from ..errors import DataError

__all__ = ["decode_files", "decode_blobs", "CHUNK"]

#: Images per decode call: large enough to amortize the per-call overhead, small enough
#: that a few chunks in flight stay a few MB.
CHUNK = 1024

_Chunk = tuple[int, list[torch.Tensor], list[str]]  # (first index, encoded views, names)


@functools.cache
def _torchvision_io() -> tuple | None:
    """``(ImageReadMode, decode_image, decode_jpeg)``, or ``None`` where torchvision lacks them
    (it deprecates them in 0.29 in favour of TorchCodec; Pillow then decodes everything)."""
    try:
        from torchvision.io import ImageReadMode, decode_image, decode_jpeg
    except ImportError:  # pragma: no cover - depends on the torchvision release
        return None
    return ImageReadMode, decode_image, decode_jpeg


def _decode_one(blob: torch.Tensor) -> torch.Tensor | None:
    """Decode one encoded image to uint8 ``(3, H, W)``; ``None`` if no decoder can read it."""
    tv = _torchvision_io()
    if tv is not None:
        try:
            image = tv[1](blob, mode=tv[0].RGB)
            if image.dtype == torch.uint8:  # 16-bit PNGs decode to uint16: let Pillow convert them
                return image
        except (RuntimeError, ValueError):
            pass
    from PIL import Image  # Pillow comes with torchvision; imported only for rare formats

    try:
        with Image.open(io.BytesIO(blob.numpy().tobytes())) as im:
            array = np.asarray(im.convert("RGB"))
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    return torch.from_numpy(array.copy()).permute(2, 0, 1).contiguous()


def _decode_chunk(blobs: list[torch.Tensor]) -> list[torch.Tensor | None]:
    tv = _torchvision_io()
    if tv is not None:
        try:  # the fast path: every file of the chunk is a JPEG
            return list(tv[2](blobs, mode=tv[0].RGB))
        except RuntimeError:
            pass
    return [_decode_one(b) for b in blobs]


def _views(buffer: torch.Tensor, offsets: Sequence[int]) -> list[torch.Tensor]:
    return [buffer[offsets[i] : offsets[i + 1]] for i in range(len(offsets) - 1)]


def _decode_stream(chunks: Iterator[_Chunk], total: int, desc: str) -> torch.Tensor:
    """Decode ``chunks`` (produced lazily, in order) into one ``(total, 3, H, W)`` tensor."""
    if total == 0:
        return torch.empty((0, 3, 0, 0), dtype=torch.uint8)
    workers = max(1, min(4, os.cpu_count() or 1))
    out: torch.Tensor | None = None
    first = ""
    pending: deque[tuple[int, list[str], Future]] = deque()

    def finish(start: int, names: list[str], future: Future) -> None:
        nonlocal out, first
        images = future.result()
        for name, image in zip(names, images):
            if image is None:
                raise DataError(f"cannot decode image file {name}: not a readable image (remove or replace it)")
            if out is None:
                out, first = torch.empty((total, *image.shape), dtype=torch.uint8), name
            elif image.shape != out.shape[1:]:
                raise DataError(
                    f"image {name} is {image.shape[2]}x{image.shape[1]} pixels but {first} is "
                    f"{out.shape[3]}x{out.shape[2]}; all images of a dataset must have the same size "
                    "(resize them first)"
                )
        torch.stack(images, out=out[start : start + len(images)])  # type: ignore[index]
        bar.update(len(images))

    with ThreadPoolExecutor(workers) as pool, tqdm(total=total, desc=desc, unit="img", disable=None) as bar:
        for start, blobs, names in chunks:
            pending.append((start, names, pool.submit(_decode_chunk, blobs)))
            if len(pending) > 2 * workers:  # bound the encoded bytes held in memory
                finish(*pending.popleft())
        while pending:
            finish(*pending.popleft())
    assert out is not None
    return out


def decode_blobs(
    buffer: np.ndarray | torch.Tensor,
    offsets: Sequence[int] | np.ndarray,
    names: Sequence[str],
    desc: str = "decoding",
) -> torch.Tensor:
    """Decode images stored back to back in one byte buffer.

    Args:
        buffer: uint8 1-D array, the encoded files concatenated.
        offsets: ``N + 1`` byte offsets; image ``i`` is ``buffer[offsets[i]:offsets[i + 1]]``.
        names: ``N`` names used in error messages (e.g. the source file names).
        desc: progress-bar label.

    Returns:
        uint8 ``(N, 3, H, W)``.

    Raises:
        DataError: if an image cannot be decoded or differs in size from the first.
    """
    array = np.asarray(buffer, dtype=np.uint8)
    buf = torch.from_numpy(array if array.flags.writeable else array.copy())  # torch wants writable memory
    offs = [int(o) for o in offsets]
    if len(offs) != len(names) + 1:
        raise DataError(f"{desc}: {len(offs)} offsets for {len(names)} images (expected one more)")

    def chunks() -> Iterator[_Chunk]:
        for lo in range(0, len(names), CHUNK):
            hi = min(lo + CHUNK, len(names))
            yield lo, _views(buf, offs[lo : hi + 1]), list(names[lo:hi])

    return _decode_stream(chunks(), len(names), desc)


def decode_files(paths: Sequence[str | Path], desc: str = "decoding") -> torch.Tensor:
    """Read and decode image files, in order.

    Args:
        paths: the image files.
        desc: progress-bar label.

    Returns:
        uint8 ``(N, 3, H, W)``.

    Raises:
        DataError: if a file cannot be read or decoded, or differs in size from the first.
    """

    def chunks() -> Iterator[_Chunk]:
        for lo in range(0, len(paths), CHUNK):
            group = paths[lo : lo + CHUNK]
            blobs = []
            for path in group:
                try:
                    with open(path, "rb") as f:
                        blobs.append(f.read())
                except OSError as exc:
                    raise DataError(f"cannot read image file {path}: {exc.strerror or exc}") from exc
            offsets = np.concatenate([[0], np.cumsum([len(b) for b in blobs])])
            joined = bytearray(b"".join(blobs))  # one writable buffer: torch slices it for free
            buffer = torch.frombuffer(joined, dtype=torch.uint8) if joined else torch.empty(0, dtype=torch.uint8)
            yield lo, _views(buffer, offsets.tolist()), [str(p) for p in group]

    return _decode_stream(chunks(), len(paths), desc)

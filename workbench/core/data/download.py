"""Downloading the MNIST family and CIFAR-10 with progress, Cancel and mirrors."""

from __future__ import annotations

import http.client
import logging
import os
import tempfile
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, BinaryIO, Literal

from workbench.core.atomic_files import new_file_mode
from workbench.core.data import cifar
from workbench.core.data.registry import (
    CancelCallback,
    DataError,
    DatasetInfo,
    DownloadCancelled,
    DownloadProgress,
    ProgressCallback,
    dataset_info,
    default_data_dir,
    torchvision_dataset,
)

if TYPE_CHECKING:
    from torchvision import datasets

log = logging.getLogger(__name__)

MIRROR_ENV = "PTCORE_DATA_MIRROR"
_CHUNK_BYTES = 64 * 1024
_TIMEOUT_S = 30
# A server that trickles (100 bytes every 10 s) never lets a read time out: a
# transfer that gets less than STALL_MIN_BYTES in a window of STALL_WINDOW_S
# is given up as stalled (the next mirror is tried).
STALL_WINDOW_S = 60.0
STALL_MIN_BYTES = 64 * 1024
_MD5_MISMATCH = "MD5 checksum mismatch"


def check_integrity(path: str | Path, md5: str) -> bool:
    """torchvision's MD5 check of ``path``: False when missing or different."""
    # torchvision takes 1.5 s to import; only a download or an unpack needs it.
    from torchvision.datasets.utils import check_integrity as md5_matches

    return md5_matches(str(path), md5)


def resolve_root(data_dir: str | Path | None, folder: str) -> Path:
    """The torchvision root (the folder holding ``<folder>/raw``) for ``data_dir``.

    Users often point at the ``MNIST`` folder itself or at its ``raw`` folder; both
    name the same data, so accept them rather than download a second copy.
    """
    path = default_data_dir() if data_dir is None else Path(data_dir).expanduser()
    if path.name == "raw" and path.parent.name == folder:
        return path.parent.parent
    if path.name == folder:
        return path.parent
    return path


def raw_dir_of(root: Path, dataset_cls: type[datasets.MNIST]) -> Path:
    return root / dataset_cls.__name__ / "raw"


def _unpacked_name(archive_name: str) -> str:
    return archive_name.removesuffix(".gz")


def missing_raw_files(raw_dir: Path, dataset_cls: type[datasets.MNIST]) -> list[str]:
    # torchvision reads the unpacked files; the .gz archives only matter for download.
    return [
        _unpacked_name(name)
        for name, _md5 in dataset_cls.resources
        if not (raw_dir / _unpacked_name(name)).is_file()
    ]


# --------------------------------------------------------------------------- loading


_FailureKind = Literal["offline", "interrupted", "http", "corrupted"]


class FetchFailed(Exception):
    """One server could not deliver one file.

    ``kind`` says why: ``"offline"`` no connection could be made, ``"interrupted"``
    the connection broke off mid-file, ``"http"`` the server refused the file,
    ``"corrupted"`` the bytes arrived but fail their checksum.
    """

    def __init__(self, url: str, reason: str, kind: _FailureKind) -> None:
        super().__init__(f"{url}: {reason}")
        self.url = url
        self.reason = reason
        self.kind = kind


def fetch_file(
    url: str,
    target: Path,
    *,
    report: Callable[[int, int | None], None],
    check_cancel: Callable[[], None],
    corrupt: Callable[[Path], str | None],
) -> None:
    """Stream ``url`` to a temp file beside ``target``; move it there if sound.

    ``report(done, total)`` follows the bytes, ``check_cancel()`` raises to stop
    (polled every chunk), ``corrupt(file)`` says why the bytes are damaged, or
    None. Nothing but a sound, whole file ever lands at ``target``.

    Raises
    ------
    FetchFailed
        No connection, a refusal, a broken transfer or damaged bytes.
    DataError
        The disk refused a write.
    """
    fd, tmp_name = tempfile.mkstemp(
        dir=target.parent, prefix=f".{target.name}.", suffix=".part"
    )
    tmp_path = Path(tmp_name)
    try:
        os.fchmod(fd, new_file_mode())  # not mkstemp's private 0600
        with os.fdopen(fd, "wb") as out:
            _stream(url, out, tmp_path, report, check_cancel)
        problem = corrupt(tmp_path)
        if problem is not None:
            raise FetchFailed(url, problem, "corrupted")
        os.replace(tmp_path, target)
    finally:
        tmp_path.unlink(missing_ok=True)


def _stream(
    url: str,
    out: BinaryIO,
    out_path: Path,
    report: Callable[[int, int | None], None],
    check_cancel: Callable[[], None],
) -> None:
    """Copy ``url`` to ``out`` in chunks, reporting progress, polling cancel."""
    done = 0
    total: int | None = None
    try:
        # torchvision's own User-Agent: some mirrors refuse Python's default.
        from torchvision.datasets.utils import USER_AGENT  # 1.5 s import: lazy

        request = urllib.request.Request(url, headers={"User-Agent": USER_AGENT})
        with urllib.request.urlopen(request, timeout=_TIMEOUT_S) as response:
            length = response.headers.get("Content-Length")
            total = int(length) if length and length.isdigit() else None
            report(done, total)
            stall = StallWatch()
            # read1: back with whatever one receive brought, so Cancel and the
            # stall rule are checked as bytes arrive, however slowly.
            while chunk := response.read1(_CHUNK_BYTES):
                check_cancel()
                _write_chunk(out, chunk, out_path)
                done += len(chunk)
                report(done, total)
                if stalled := stall.add(len(chunk)):
                    raise FetchFailed(url, stalled, "interrupted")
    except urllib.error.HTTPError as exc:
        exc.close()  # it holds the response's socket
        raise FetchFailed(url, f"HTTP {exc.code} {exc.reason}", "http") from exc
    except urllib.error.URLError as exc:
        raise FetchFailed(url, str(exc.reason), "offline") from exc
    except (OSError, http.client.HTTPException) as exc:
        # Timeouts and resets mid-transfer: the connection, not the server's data.
        reason = str(exc) or type(exc).__name__
        raise FetchFailed(url, reason, "interrupted") from exc
    if total is not None and done != total:
        reason = f"connection closed after {done} of {total} bytes"
        raise FetchFailed(url, reason, "interrupted")


class StallWatch:
    """Each window of ``STALL_WINDOW_S`` seconds must bring ``STALL_MIN_BYTES``."""

    def __init__(self) -> None:
        self._since = time.monotonic()
        self._bytes = 0

    def add(self, count: int) -> str | None:
        """``count`` more bytes arrived; why the transfer stalled, or None."""
        self._bytes += count
        now = time.monotonic()
        if now - self._since < STALL_WINDOW_S:
            return None
        if self._bytes < STALL_MIN_BYTES:
            return (
                f"stalled: {self._bytes:,} bytes in the last {now - self._since:.0f} s"
            )
        self._since, self._bytes = now, 0
        return None


def download_dataset(
    name: str,
    root: str | Path,
    *,
    progress: ProgressCallback | None = None,
    cancel: CancelCallback | None = None,
    mirrors: Sequence[str] | None = None,
) -> None:
    """Download and unpack a dataset's files into ``root``.

    The MNIST family goes to ``root/<Class>/raw/``, with the file names and MD5
    sums of torchvision's own ``resources``, so the result is exactly what
    ``torchvision.datasets.<Class>(root, download=True)`` produces. CIFAR-10 goes
    to ``root/cifar-10-batches-bin/`` from the official *binary* archive (kept in
    ``root``; see :mod:`workbench.core.data.cifar`). Either way byte progress is
    reported and the download can be cancelled. Files already present (unpacked,
    or a valid archive) are not downloaded again.

    Parameters
    ----------
    name : str
        ``"mnist"``, ``"fashion-mnist"``, ``"kmnist"`` or ``"cifar10"``
        (``"digits"`` is a no-op).
    root : str or Path
        Data folder (created when missing); for CIFAR-10 also
        ``cifar-10-batches-bin`` itself.
    progress : callable, optional
        Called with a :class:`DownloadProgress` when a file starts and per 64 KiB.
    cancel : callable, optional
        Polled per chunk; returning True stops with :class:`DownloadCancelled`.
    mirrors : sequence of str, optional
        Base URLs tried in order. Default: ``$PTCORE_DATA_MIRROR`` when set, else
        the dataset's official mirrors. ``{folder}`` in a base URL becomes the
        torchvision class name (``MNIST``, ``FashionMNIST``, ``KMNIST``,
        ``CIFAR10``), so one ``$PTCORE_DATA_MIRROR`` can serve every dataset.

    Raises
    ------
    DataError
        No network, no mirror has the file, or a download is corrupted.
    DownloadCancelled
        ``cancel()`` returned True; the partial file has been deleted.
    """
    info = dataset_info(name)
    if info.offline:
        return
    if name == "cifar10":
        _download_cifar10(info, root, progress, cancel, mirrors)
        return
    dataset_cls = torchvision_dataset(name)
    raw_dir = raw_dir_of(Path(root).expanduser(), dataset_cls)
    try:
        raw_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create data folder {raw_dir}: {exc}") from exc
    downloader = _Downloader(
        info,
        _mirror_bases(dataset_cls.__name__, dataset_cls.mirrors, mirrors),
        len(dataset_cls.resources),
        progress,
        cancel,
        f"{dataset_cls.__name__}/raw/",
    )
    for index, (file_name, md5) in enumerate(dataset_cls.resources, start=1):
        if (raw_dir / _unpacked_name(file_name)).is_file():
            continue
        archive = raw_dir / file_name
        if not check_integrity(archive, md5):
            downloader.fetch(file_name, md5, index, archive)
        _unpack(archive)
    log.info("%s is ready in %s", info.title, raw_dir)


def _download_cifar10(
    info: DatasetInfo,
    root: str | Path,
    progress: ProgressCallback | None,
    cancel: CancelCallback | None,
    mirrors: Sequence[str] | None,
) -> None:
    """The CIFAR-10 binary archive into ``root``, unpacked to its batches folder."""
    root = cifar.cifar_root(root)
    if not cifar.missing_files(root):
        return
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataError(f"cannot create data folder {root}: {exc}") from exc
    archive = root / cifar.ARCHIVE_NAME
    if not check_integrity(archive, cifar.ARCHIVE_MD5):
        bases = _mirror_bases(cifar.MIRROR_FOLDER, cifar.MIRRORS, mirrors)
        downloader = _Downloader(info, bases, 1, progress, cancel, f"{cifar.FOLDER}/")
        downloader.fetch(cifar.ARCHIVE_NAME, cifar.ARCHIVE_MD5, 1, archive)
    cifar.unpack_archive(archive, root)
    log.info("%s is ready in %s", info.title, root / cifar.FOLDER)


def _mirror_bases(
    folder: str, default_mirrors: Sequence[str], mirrors: Sequence[str] | None
) -> list[str]:
    env_mirror = os.environ.get(MIRROR_ENV)
    if mirrors is not None:
        bases = list(mirrors)
    elif env_mirror:
        bases = [env_mirror]
    else:
        bases = list(default_mirrors)
    # torchvision joins base and file name by plain concatenation.
    return [base.replace("{folder}", folder).rstrip("/") + "/" for base in bases]


@dataclass(slots=True)
class _Downloader:
    """Fetches one dataset's archives, mirror by mirror, with progress and cancel."""

    info: DatasetInfo
    bases: list[str]
    file_count: int
    progress: ProgressCallback | None
    cancel: CancelCallback | None
    # What a data folder copied by hand must hold, e.g. "MNIST/raw/".
    layout: str

    def fetch(self, file_name: str, md5: str, index: int, archive: Path) -> None:
        """Download ``file_name`` to ``archive``, verified; raise if no mirror can."""
        failures: list[FetchFailed] = []
        for base in self.bases:
            self._check_cancel()
            url = base + file_name
            log.info("downloading %s", url)
            try:
                self._download_verified(url, md5, archive, index)
                return
            except FetchFailed as failure:
                log.warning("download failed: %s", failure)
                failures.append(failure)
        raise DataError(
            _download_failed_message(self.info, archive, self.layout, failures)
        )

    def _check_cancel(self) -> None:
        if self.cancel is not None and self.cancel():
            raise DownloadCancelled(f"Download of {self.info.title} cancelled.")

    def _report(self, archive: Path, index: int, done: int, total: int | None) -> None:
        if self.progress is not None:
            self.progress(
                DownloadProgress(
                    self.info.name, archive.name, index, self.file_count, done, total
                )
            )

    def _download_verified(self, url: str, md5: str, archive: Path, index: int) -> None:
        """Fetch ``url`` to ``archive`` if its MD5 matches."""
        fetch_file(
            url,
            archive,
            report=lambda done, total: self._report(archive, index, done, total),
            check_cancel=self._check_cancel,
            corrupt=lambda tmp: None if check_integrity(tmp, md5) else _MD5_MISMATCH,
        )


def _write_chunk(out: BinaryIO, chunk: bytes, out_path: Path) -> None:
    # A DataError is not an OSError, so a full disk is not mistaken for the network.
    try:
        out.write(chunk)
    except OSError as exc:
        raise DataError(f"cannot write {out_path}: {exc}") from exc


def _download_failed_message(
    info: DatasetInfo, archive: Path, layout: str, failures: list[FetchFailed]
) -> str:
    alternatives = (
        " Alternatives: use the bundled offline dataset with `--dataset digits`, or "
        f"point `--data-dir` at a folder that holds {layout} "
        "(copied from a machine with network)."
    )
    if not failures:
        return (
            f"Could not download {info.title}: no download mirror is configured."
            + alternatives
        )
    kinds = {f.kind for f in failures}
    if "corrupted" in kinds:
        url = next(f.url for f in failures if f.kind == "corrupted")
        return (
            f"Could not download {info.title}: {archive.name} from {url} was "
            "corrupted (its MD5 checksum does not match). Try again later."
            + alternatives
        )
    if kinds == {"offline"}:
        return (
            f"Could not download {info.title}: no network connection "
            f"({failures[-1].reason})." + alternatives
        )
    if kinds <= {"offline", "interrupted"}:
        return (
            f"Could not download {info.title}: the network connection broke off "
            f"({failures[-1].reason})." + alternatives
        )
    tried = "; ".join(str(f) for f in failures)
    return (
        f"Could not download {info.title}: no mirror could deliver {archive.name} "
        f"({tried})." + alternatives
    )


def unpack_present_archives(raw_dir: Path, dataset_cls: type[datasets.MNIST]) -> None:
    for file_name, md5 in dataset_cls.resources:
        archive = raw_dir / file_name
        if not (raw_dir / _unpacked_name(file_name)).is_file() and check_integrity(
            archive, md5
        ):
            _unpack(archive)


def _unpack(archive: Path) -> None:
    """Unpack ``archive`` next to itself; a half-written file never gets its name."""
    target = archive.parent / _unpacked_name(archive.name)
    if target.is_file():
        return
    log.info("unpacking %s", archive)
    from torchvision.datasets.utils import extract_archive  # 1.5 s import: lazy

    try:
        with tempfile.TemporaryDirectory(dir=archive.parent) as tmp:
            extract_archive(archive, tmp)
            for item in Path(tmp).iterdir():
                os.replace(item, archive.parent / item.name)
    except (OSError, EOFError, RuntimeError) as exc:
        raise DataError(f"cannot unpack {archive}: {exc}") from exc


# --------------------------------------------------------------------------- loaders

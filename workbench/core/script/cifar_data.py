"""The CIFAR-10 half of a written script: the binary batch files, read as records.

The blocks repeat :mod:`workbench.core.data.cifar` and ``build.resized``: the
same files (``cifar-10-batches-bin/data_batch_1..5.bin`` and ``test_batch.bin``,
unpacked from the official binary archive when only the archive is there),
read with numpy as plain records, never unpickled; the same resize and centre
crop for another image size. Change one side, change the other:
``tests/core/test_script_datasets.py`` trains both and compares every loss.
"""

from __future__ import annotations

from workbench.core.config import TrainConfig
from workbench.core.data import cifar
from workbench.core.script.parts import literal

CIFAR = "cifar10"


def cifar_settings(cfg: TrainConfig) -> list[str]:
    """The settings lines of a CIFAR-10 script."""
    url = cifar.MIRRORS[0] + cifar.ARCHIVE_NAME
    return [
        f"IMAGE_SIZE = {cfg.resolved_image_size}  # the 32x32 photos are brought to it",
        "# The binary version of CIFAR-10: plain records, no pickle to run.",
        f"CIFAR_FOLDER = {literal(cifar.FOLDER)}",
        "TRAIN_FILES = (\n"
        + "".join(f"    {literal(n)},\n" for n in cifar.TRAIN_FILES)
        + ")",
        f"TEST_FILES = {literal(cifar.TEST_FILES)}",
        f"ARCHIVE = {literal(cifar.ARCHIVE_NAME)}",
        f"ARCHIVE_URL = {literal(url)}",
        f"ARCHIVE_MD5 = {literal(cifar.ARCHIVE_MD5)}",
    ]


CIFAR_DATA = '''
def cifar_folder(root: Path) -> Path:
    """root/CIFAR_FOLDER with every batch file: unpacked from root/ARCHIVE when
    only the archive is there (downloaded first when DOWNLOAD allows it)."""
    folder = root / CIFAR_FOLDER
    names = TRAIN_FILES + TEST_FILES
    if all((folder / name).is_file() for name in names):
        return folder
    archive = root / ARCHIVE
    if not archive.is_file() or md5(archive) != ARCHIVE_MD5:
        if not DOWNLOAD:
            raise SystemExit(
                f"CIFAR-10 files are missing from {folder}, and {archive} is not "
                "the binary archive: allow DOWNLOAD, or point --data-dir at them"
            )
        root.mkdir(parents=True, exist_ok=True)
        urllib.request.urlretrieve(ARCHIVE_URL, archive)
        if md5(archive) != ARCHIVE_MD5:
            raise SystemExit(f"{archive} did not pass its MD5 check")
    # Only the known batch files, as regular files: no path of the archive's.
    folder.mkdir(parents=True, exist_ok=True)
    with tarfile.open(archive, "r:gz") as tar:
        for name in names:
            member = tar.getmember(f"{CIFAR_FOLDER}/{name}")
            source = tar.extractfile(member) if member.isfile() else None
            if source is None:
                raise SystemExit(f"{archive}: {name} is not a file")
            (folder / name).write_bytes(source.read())
    return folder


def md5(path: Path) -> str:
    return hashlib.md5(path.read_bytes()).hexdigest()


def read_batch(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """One batch file as uint8 images (N, 3, 32, 32) and int64 labels (N,).

    A record is one label byte, then the red, green and blue 32x32 planes.
    """
    raw = np.frombuffer(path.read_bytes(), dtype=np.uint8)
    if raw.size == 0 or raw.size % 3073:
        raise SystemExit(f"{path} is not whole 3073-byte records (truncated?)")
    records = raw.reshape(-1, 3073)
    labels = records[:, 0].astype(np.int64)
    if labels.max() >= 10:
        raise SystemExit(f"{path} holds label {labels.max()}: not CIFAR-10")
    return records[:, 1:].reshape(-1, 3, 32, 32).copy(), labels


def read_split(folder: Path, names: tuple[str, ...]) -> tuple[torch.Tensor, ...]:
    """The batch files ``names``, in that order, brought to IMAGE_SIZE."""
    batches = [read_batch(folder / name) for name in names]
    images = torch.from_numpy(np.concatenate([b[0] for b in batches]))
    labels = torch.from_numpy(np.concatenate([b[1] for b in batches]))
    if IMAGE_SIZE != 32:  # the shorter side resized, then the centre cropped
        images = TF.resize(images, IMAGE_SIZE, antialias=True)
        images = TF.center_crop(images, [IMAGE_SIZE, IMAGE_SIZE])
    return images, labels


def load_data(data_dir: str) -> tuple[torch.Tensor, ...]:
    """CIFAR-10: uint8 train images (N, 3, S, S), int64 labels, and the test set.

    ``data_dir`` holds CIFAR_FOLDER (or is that folder).
    """
    root = Path(data_dir).expanduser()
    if root.name == CIFAR_FOLDER:
        root = root.parent
    folder = cifar_folder(root)
    return (*read_split(folder, TRAIN_FILES), *read_split(folder, TEST_FILES))
'''

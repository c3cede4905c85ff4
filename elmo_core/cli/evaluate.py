"""``python -m elmo_core evaluate``: the leave-one-out sense probe and the held-out perplexity of a model."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from elmo_core.cli.common import load_embedder


def cmd_evaluate(args) -> int:
    """``python -m elmo_core evaluate``: the leave-one-out sense probe on WordNet examples and our sentences, and the
    held-out (test split) perplexity when the checkpoint has its softmax and vocabulary."""
    import torch

    from elmo_core.data.senses import read_sense_sentences, read_wordnet_examples, subsample_keys
    from elmo_core.data.text import read_token_lines as read_sentences
    from elmo_core.model.loading import model_folder
    from elmo_core.probes.loo_sense import loo_sense_probe, loo_sense_table
    from elmo_core.training.evaluate import heldout_perplexity, model_info

    if args.threads:
        torch.set_num_threads(args.threads)
    embedder = load_embedder(args)
    report: dict = {"model": model_info(embedder), "sense_probe": {}, "perplexity": None}
    results = []
    datasets = [
        (
            "WordNet examples",
            lambda: subsample_keys(read_wordnet_examples(args.wordnet_dir), args.max_items, args.seed),
        ),
        ("own sentences", lambda: read_sense_sentences(args.sentences)),
        ("sense probe (34 words)", lambda: read_sense_sentences(args.probe)),
    ]
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
        report["perplexity"] = {
            **heldout_perplexity(ckpt, sentences, args.batch_size),
            "sentences": len(sentences),
            "file": str(test_file),
            "seconds": round(time.perf_counter() - start, 1),
        }
    table = loo_sense_table(results) if results else "(no sense data)"
    ppl = report["perplexity"]
    text = (
        f"Model: {embedder.name}, {embedder.num_parameters:,} parameters\n\nLeave-one-out sense probe (1-NN "
        f"accuracy within lemma, %):\n\n{table}\n\nPerplexity: "
        + (
            f"forward {ppl['forward']:.1f}, backward {ppl['backward']:.1f}, average {ppl['average']:.1f} "
            f"on {ppl['sentences']} test sentences"
            if "forward" in ppl
            else str(ppl.get("skipped"))
        )
    )
    print(text)
    if args.out:
        Path(args.out).write_text(json.dumps(report, indent=1) + "\n", encoding="utf-8")
        print(f"wrote {args.out}", file=sys.stderr)
    return 0


def add_evaluate_parser(sub) -> None:
    from elmo_core.paths import OWN_SENTENCES, SENSE_PROBE, corpus_dir

    about = (
        "the leave-one-out sense probe (probe task loo_sense) on WordNet examples, our sentences and the "
        "34-word probe, and the test split's perplexity"
    )
    p = sub.add_parser("evaluate", help=about, description=about[0].upper() + about[1:] + ".")
    p.add_argument(
        "--checkpoint",
        help="a folder with options.json + model.safetensors (+ softmax.safetensors, "
        "vocab.txt for perplexity); default: assets/default",
    )
    p.add_argument("--options", help="ELMo options.json (with --weights)")
    p.add_argument("--weights", help="ELMo weights.hdf5")
    p.add_argument("--corpus-dir", default=str(corpus_dir()), help="folder with test.txt (default %(default)s)")
    p.add_argument("--max-sentences", type=int, default=0, help="use the first N test sentences (0 = all)")
    p.add_argument("--wordnet-dir", help="WordNet dict folder (default: $ELMO_WORDNET_DIR or /usr/share/wordnet)")
    p.add_argument("--sentences", default=str(OWN_SENTENCES), help="our sense sentences (TSV word, sense, sentence)")
    p.add_argument(
        "--probe",
        default=str(SENSE_PROBE),
        help="the fresh sense probe of assets/probes/SENSE_PROBE.md (TSV word, sense, sentence)",
    )
    p.add_argument(
        "--max-items", type=int, default=0, help="subsample WordNet to about N items (whole lemmas; 0 = all)"
    )
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--threads", type=int, default=0, help="torch CPU threads (0 = torch's default)")
    p.add_argument("--device", default=None, help="cpu, cuda, cuda:N (default: GPU if present)")
    p.add_argument("--out", help="write the results as JSON here")
    p.set_defaults(func=cmd_evaluate)

"""`namesake publish`: everything namesake makes, on the Hugging Face Hub in one command each:
the AmbER and WES datasets, a trained model, the two metrics as Spaces and the demo Space.

Every kind stages the exact folder it uploads first (``--stage-only DIR`` writes it there
and uploads nothing), checks it, and uploads that folder and nothing else
(`namesake.publish`)."""

from __future__ import annotations

import argparse
from pathlib import Path

from namesake.commands.arguments import add_output
from namesake.outputs import add_input

METRICS = ("entity_confusion", "wes_similarity")


def register(groups) -> None:
    parser = groups.add_parser(
        "publish", help="stage, check and upload a dataset, model, metric or Space to the Hub"
    )
    kinds = parser.add_subparsers(dest="command", required=True)

    dataset = kinds.add_parser("dataset", help="upload the AmbER or WES dataset")
    datasets = dataset.add_subparsers(dest="kind", required=True)
    amber = datasets.add_parser("amber", help="an AmbER build (`amber build` or `amber import`)")
    _add_folder(amber, "a folder written by `namesake amber build` or `namesake amber import`")
    _add_destination(amber, "publish dataset amber", "e.g. your-name/amber")
    amber.set_defaults(run=_publish_amber)
    wes = datasets.add_parser("wes", help="a WES build (`namesake wes build`)")
    _add_folder(wes, "a folder written by `namesake wes build`")
    _add_destination(wes, "publish dataset wes", "e.g. your-name/wes")
    wes.set_defaults(run=_publish_wes)

    model = kinds.add_parser("model", help="a model folder a script of training/ wrote")
    _add_folder(model, "a training script's --output_dir (config.json, weights, README.md)")
    _add_destination(model, "publish model", "e.g. your-name/wes-cross-encoder")
    model.set_defaults(run=_publish_model)

    metric = kinds.add_parser("metric", help="an evaluate metric as a Space")
    metric.add_argument("name", choices=METRICS, help="which metric")
    _add_destination(metric, "publish metric", "e.g. your-name/entity_confusion")
    metric.set_defaults(run=_publish_metric)

    space = kinds.add_parser("space", help="the demo Space (space_app/ and its wheel)")
    add_input(
        space,
        "--artifacts",
        default="demo_output",
        help="the folder `make demo` wrote, which the Space shows (default: demo_output)",
    )
    add_input(
        space,
        "--dataset",
        metavar="REPO_OR_PATH",
        help="the AmbER dataset the Space reads: a Hub id or a folder (default: the one in "
        "--artifacts)",
    )
    _add_destination(space, "publish space", "e.g. your-name/namesake-demo")
    space.set_defaults(run=_publish_space)


def _add_folder(parser: argparse.ArgumentParser, help: str) -> None:
    add_input(parser, "folder", help=help)


def _add_destination(parser: argparse.ArgumentParser, writer: str, example: str) -> None:
    """The options every kind shares: where it goes, or where it is only staged."""
    parser.add_argument(
        "--repo-id",
        metavar="OWNER/NAME",
        help=f"the Hub repo to upload to, {example} (needed unless --stage-only)",
    )
    add_output(
        parser,
        "--stage-only",
        "write the staged folder here, checked, and upload nothing",
        kind="folder",
        writer=writer,
    )
    parser.add_argument("--private", action="store_true", help="create the Hub repo as private")
    parser.add_argument(
        "--token", help="Hub token (default: $HF_TOKEN, else the one `hf auth login` saved)"
    )


def _publish(args, repo_type: str, stage) -> None:
    from namesake.publish.upload import stage_and_upload

    published = stage_and_upload(
        stage, repo_type, args.repo_id, args.stage_only, args.token, args.private
    )
    print("\n".join(published.lines()))


def _publish_amber(args) -> None:
    from namesake.publish.datasets import stage_amber

    _publish(args, "dataset", lambda out: stage_amber(args.folder, out))


def _publish_wes(args) -> None:
    from namesake.publish.datasets import stage_wes

    _publish(args, "dataset", lambda out: stage_wes(args.folder, out))


def _publish_model(args) -> None:
    from namesake.publish.models import stage_model

    _publish(args, "model", lambda out: stage_model(args.folder, out))


def _publish_metric(args) -> None:
    from namesake.publish.metric_space import check_metric_repo_id, stage_metric_space

    check_metric_repo_id(args.name, args.repo_id)  # before any work
    _publish(args, "space", lambda out: stage_metric_space(args.name, out))


def _publish_space(args) -> None:
    from namesake.publish.demo_space import stage_demo_space

    artifacts = Path(args.artifacts)
    _publish(args, "space", lambda out: stage_demo_space(out, artifacts, args.dataset))

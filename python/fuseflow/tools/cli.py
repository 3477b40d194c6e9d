"""The ``fuseflow`` command (also ``python -m fuseflow``): compile PyTorch kernels and models,
simulate them, check them against PyTorch, and plot the results.

    fuseflow run spmm --sparsity 0.9 --scale 4      # one kernel: cycles + check vs PyTorch
    fuseflow run gcn --dataset cora --report DIR    # an application in every configuration
    fuseflow view gcn -o gcn.html                   # the dataflow graphs, interactive
    fuseflow plot results.json                      # speedups and per-kernel cycles
    fuseflow reproduce fig12 fig14 --preset small   # the published figures, regenerated
    fuseflow explore gcn -o out/gcn                 # search fusions, simulate the best
    fuseflow orders gcn --simulate                  # every legal dataflow order of each kernel
    fuseflow sweep spmm --factors 1,2,4,8           # one kernel: orders x parallel levels x lanes
    fuseflow list                                   # kernels and applications

Each subcommand lives in its own module, whose registration function (listed in
:data:`COMMANDS`) adds it to the argparse subparsers with ``set_defaults(func=handler)``;
``handler(args)`` returns the exit status. Adding a subcommand is a module and a line there.
Exit status: 0 on success, 1 when a simulated output differs from PyTorch or a run fails, 2
for a bad command line or option.
"""

from __future__ import annotations

import argparse
import sys
import warnings

from fuseflow.errors import FuseFlowError
from fuseflow.reproduce import command as reproduce_cmd
from fuseflow.tools import explore_cmd, orders_cmd, plot, run_cmd, sweep_cmd
from fuseflow.tools.console import configure_logging, make_console
from fuseflow.viz import command as view_cmd

COMMANDS = (run_cmd.register, view_cmd.add_parser, plot.register, reproduce_cmd.register,
            explore_cmd.register, orders_cmd.register, sweep_cmd.register)
"""Functions ``register(subparsers)`` adding the subcommands, in help order."""


def build_parser() -> argparse.ArgumentParser:
    """The ``fuseflow`` argument parser with every subcommand of :data:`COMMANDS`."""
    import fuseflow

    parser = argparse.ArgumentParser(prog="fuseflow", description=__doc__.split("\n\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog="examples:\n" + __doc__.split("\n\n")[1])
    parser.add_argument("-v", "--verbose", action="count", default=0,
                        help="log FuseFlow's progress (-vv: debug detail); other libraries' "
                             "logs stay at warnings")
    parser.add_argument("--version", action="version",
                        version=f"fuseflow {fuseflow.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for register in COMMANDS:
        register(commands)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Runs the command line ``argv`` (default: ``sys.argv[1:]``); returns the exit status."""
    from fuseflow.sim.engines.host_heap import keep_freed_memory

    args = build_parser().parse_args(argv)
    # Simulations allocate and free large arrays all the time: freed memory is kept for reuse
    # rather than faulted in again (this process and the workers it forks; host_heap).
    keep_freed_memory()
    errors = make_console(sys.stderr)
    configure_logging(args.verbose, errors)
    # PyTorch's export and torch-mlir warn about internals a user cannot act on.
    warnings.filterwarnings("ignore", category=UserWarning)
    warnings.filterwarnings("ignore", category=FutureWarning)
    try:
        return args.func(args)
    except (FuseFlowError, KeyError, ValueError, OSError) as err:
        message = err.args[0] if isinstance(err, KeyError) and err.args else err
        errors.print(f"fuseflow: error: {message}", markup=False, soft_wrap=True)
        return 2


if __name__ == "__main__":
    sys.exit(main())

"""torch.sparse inputs that PyTorch's exporter or torch-mlir cannot trace sparse are traced
dense and declared with their layout (issue 14): the model is unchanged, the user's sparse
tensors are the simulated inputs, and a debug log line names each such input."""

import logging
import warnings

import pytest
import torch
from fn_module import Fn

import fuseflow
from fuseflow.frontend import FrontendError, sparse_format

warnings.filterwarnings("ignore")


def _sparse(m, n, density=0.5, seed=0):
    g = torch.Generator().manual_seed(seed)
    a = torch.rand(m, n, generator=g) * (torch.rand(m, n, generator=g) < density)
    a[1] = 0                                   # an empty row
    return a


A = _sparse(5, 4)
CASES = {
    "mv_csr": (lambda a, x: torch.mv(a, x), (A.to_sparse_csr(), torch.rand(4)), "csr"),
    "mv_coo": (lambda a, x: torch.mv(a, x), (A.to_sparse_coo(), torch.rand(4)), "coo"),
    "scale_csr": (lambda a: a * 2.0, (A.to_sparse_csr(),), "csr"),
    "x_minus_x": (lambda a: a - a, (A.to_sparse_csr(),), "csr"),
    "x_times_x": (lambda a: a * a, (A.to_sparse_coo(),), None),   # traced sparse as it is
    "relu_plus_one_coo": (lambda a: torch.relu(a) + 1.0, (A.to_sparse_coo(),), "coo"),
    # torch.sparse.mm: aten._sparse_mm/_sparse_addmm decompose to mm/addmm (traced sparse)
    "sparse_mm_coo": (lambda a, b: torch.sparse.mm(a, b), (A.to_sparse_coo(), torch.rand(4, 3)),
                      None),
    "sparse_mm_csr": (lambda a, b: torch.sparse.mm(a, b), (A.to_sparse_csr(), torch.rand(4, 3)),
                      None),
    "mv_csc": (lambda a, x: torch.mv(a, x), (A.to_sparse_csc(), torch.rand(4)), "csc"),
    "csr_t_matmul": (lambda a, b: a.t() @ b, (A.to_sparse_csr(), torch.rand(5, 3)), "csr"),
}


@pytest.mark.parametrize("name", list(CASES))
def test_untraceable_sparse_inputs_are_traced_dense_and_declared(name, caplog):
    fn, inputs, declared = CASES[name]
    model = Fn(fn)
    with caplog.at_level(logging.DEBUG, logger="fuseflow.frontend"):
        compiled = fuseflow.compile(model, inputs)
    lines = [r.getMessage() for r in caplog.records if "traced dense" in r.getMessage()]
    if declared is None:
        assert not lines
    else:
        assert lines and "input 'x' (torch.sparse_" in lines[0]
        assert lines[0].endswith(f"traced dense and declared '{declared}'")
    expected = model(*[t.to_dense() if t.layout != torch.strided else t for t in inputs])
    for engine in ("fast", "reference"):
        torch.testing.assert_close(compiled.simulate(*inputs, engine=engine).output, expected)


def test_sparse_vector_and_unsupported_sparse_tensors():
    assert sparse_format(torch.rand(4).to_sparse_coo(), "x") == "sparse_vector"
    assert sparse_format(A.to_sparse_csc(), "A") == "csc"
    with pytest.raises(FrontendError, match="input 'T': a torch.sparse_coo tensor of shape "
                                            r"\(2, 2, 2\)"):
        sparse_format(torch.rand(2, 2, 2).to_sparse_coo(), "T")


class _Records(logging.Handler):
    def __init__(self):
        super().__init__(logging.DEBUG)
        self.records = []

    def emit(self, record):
        self.records.append(record)


def test_failed_sparse_trace_logs_no_fake_tensor_errors():
    """The sparse trace of A_csr - A_csr fails in PyTorch's fake tensors, which log an
    ERROR with a traceback; the frontend expects that failure (it retries dense) and drops
    those records, and only while it traces sparse."""
    logger = logging.getLogger("torch._subclasses.fake_tensor")
    handler, level = _Records(), logger.level
    logger.addHandler(handler)
    logger.setLevel(logging.DEBUG)
    try:
        fuseflow.compile(Fn(lambda a: a - a), (A.to_sparse_csr(),))
        assert not [r for r in handler.records if r.levelno >= logging.ERROR]
        assert not logger.filters
        # outside the frontend's sparse trace, the same failure is still logged
        with pytest.raises(RuntimeError, match="unsupported tensor layout"):
            torch.export.export(Fn(lambda a: a - a), (A.to_sparse_csr(),))
        assert any("failed while attempting to run meta" in r.getMessage()
                   for r in handler.records)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)


@pytest.mark.parametrize("declared", [False, True])
def test_a_model_folded_to_its_sparse_input_returns_it(declared):
    """torch-mlir folds ``torch.where(a > a, a, a)`` to its input: the function returns the
    input itself, whose declared sparse type becomes the result type (fuzzer seed 997: the
    verifier's 'type of return operand 0 doesn't match function result type')."""
    model = Fn(lambda a: torch.where(a > a, a, a))
    a = A if declared else A.to_sparse_csr()
    schedule = fuseflow.Schedule(formats={"x": "csr"} if declared else {})
    compiled = fuseflow.compile(model, (a,), schedule)
    for engine in ("fast", "reference"):
        out = compiled.simulate(a, engine=engine).outputs[0]
        assert torch.equal(out.to_dense() if out.layout != torch.strided else out, A)

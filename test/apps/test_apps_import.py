"""Every application's tiny preset imports through torch-mlir into linalg-on-tensors, with
``#sparse_tensor.encoding`` on its sparse inputs; and the torch-mlir limitations the models work
around are still there."""

import re

import pytest
import torch

from fuseflow.apps import APPLICATIONS, get_application
from fuseflow.mlir import import_torch

SPARSE = "#sparse_tensor.encoding"


def signature(ir: str) -> list[str]:
    """Argument types of ``@main``."""
    header = re.search(r"func\.func @main\((.*?)\) ->", ir).group(1)
    return re.findall(r"tensor<[^>]*>", header)


@pytest.mark.parametrize("name", list(APPLICATIONS))
def test_tiny_preset_imports_to_linalg(name):
    app = get_application(name)
    model, inputs = app.build("tiny")
    ir = import_torch(model, inputs)
    assert "linalg." in ir
    assert "torch." not in re.sub(r"torch_tensor\w*", "", ir), "torch dialect op left over"
    args = signature(ir)
    assert len(args) == len(inputs)
    for arg_type, tensor in zip(args, inputs):
        assert ("#sparse" in arg_type) == (tensor.layout == torch.sparse_csr), arg_type
    assert (SPARSE in ir) == any(t.layout == torch.sparse_csr for t in inputs)


def test_gcn_imports_as_four_matmuls_with_sparse_adjacency_and_features():
    ir = import_torch(*get_application("gcn").build("tiny", "cora"))
    assert SPARSE in ir
    assert "dense, d1 : compressed" in ir  # CSR
    matmuls = re.findall(r"linalg\.matmul ins\(([^)]*)\)", ir)
    assert len(matmuls) == 4
    sparse_operands = [m for m in matmuls if "#sparse" in m]
    assert len(sparse_operands) == 3  # X·W1, A·(XW1), A·(H1W2)


def test_gcn_with_dense_features_has_only_a_sparse_adjacency():
    model, inputs = get_application("gcn").build("tiny", "collab")
    assert inputs[1].layout == torch.strided
    args = signature(import_torch(model, inputs))
    assert ["#sparse" in a for a in args] == [True, False]


def test_gpt3_imports_scores_as_a_broadcast_product_and_context_as_a_batched_matmul():
    model, inputs = get_application("gpt3").build("tiny")
    ir = import_torch(model, inputs)
    config = model.config
    layers = config.layers
    # Q·Kᵀ: heads x queries x keys x head_dim products (summed over head_dim), no transpose.
    product = f"tensor<{config.heads}x{config.seq}x{config.seq}x{config.head_dim}xf32>"
    assert len(re.findall(rf"-> {product}", ir)) == layers
    assert len(re.findall(r"linalg\.batch_matmul ", ir)) == layers  # ·V
    assert len(re.findall(r"linalg\.matmul ", ir)) == 4 * layers  # QKV, out, FFN 1 and 2
    assert "0xFF800000" in ir  # the -inf of masked_fill


def test_graphsage_sparse_times_sparse_is_cast_back_to_sparse():
    """torch-mlir types ``A·X`` (CSR · CSR, CSR in eager) as a dense ``linalg.matmul`` result
    followed by a ``tensor.cast`` to the sparse type; consumers must read that cast as a
    conversion. Fails when the importer changes this."""
    ir = import_torch(*get_application("graphsage").build("tiny"))
    assert re.search(r"tensor\.cast %\w+ : tensor<34x34xf32> to tensor<34x34xf32, #sparse>", ir)


def test_workaround_sparse_attention_mask_is_still_needed():
    """The GPT-3 mask is a dense forward input because ``mask == 0`` (``aten.eq.Scalar``) has no
    SparseCsr kernel, so ``torch.export`` of ``masked_fill`` with a CSR mask fails before
    torch-mlir sees it. Fails once that works, and the mask can become sparse."""
    model, (x, mask) = get_application("gpt3").build("tiny")
    with pytest.raises(RuntimeError, match="unsupported tensor layout: SparseCsr"):
        import_torch(model, (x, mask.to_sparse_csr()))


class _SparseWeight(torch.nn.Module):
    def __init__(self):
        super().__init__()
        weight = torch.eye(8, 4)
        self.weight = torch.nn.Parameter(weight.to_sparse_csr(), requires_grad=False)

    def forward(self, x):
        return x @ self.weight


def test_workaround_sparse_weights_are_still_dense_parameters():
    """Pruned weights are dense parameters with zeros: the FX importer turns parameters into
    literals by reading their storage, which CSR tensors lack. Fails once CSR parameters
    import, and the weights can be stored sparse."""
    with pytest.raises(RuntimeError, match="doesn't have storage"):
        import_torch(_SparseWeight(), (torch.ones(3, 8),))

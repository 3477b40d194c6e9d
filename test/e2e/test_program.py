"""``fuseflow.Program``: a model is exported and imported once, each imported linalg op names
its FX node and module, and every compile starts from a copy of that one import."""

import warnings

import pytest
import torch

import fuseflow
from fuseflow import mlir
from fuseflow.apps import get_application
from fuseflow.frontend import GROUP_ATTR, MODULE_ATTR, NODE_ATTR, location_node

warnings.filterwarnings("ignore")

KERNEL_COUNTS = {"unfused": 8, "partial": 2, "full": 1}


@pytest.fixture(scope="module")
def gcn():
    app = get_application("gcn")
    model, inputs = app.build("tiny", "cora")
    with torch.no_grad():
        expected = model(*inputs)
    return model, inputs, app.plan(model), expected


@pytest.fixture
def imports(monkeypatch):
    """The calls of the torch-mlir import (one per exported program imported)."""
    calls = []
    real = mlir.import_program

    def counting(program, *args, **kwargs):
        calls.append(program)
        return real(program, *args, **kwargs)

    monkeypatch.setattr(mlir, "import_program", counting)
    return calls


def linalg_ops(module):
    fn = next(op for op in module.body.operations if op.operation.name == "func.func")
    return [op.operation for op in fn.regions[0].blocks[0].operations
            if op.operation.name.startswith("linalg.")]


def string_attr(op, name):
    return mlir.StringAttr(op.attributes[name]).value


def source_files(location) -> list[str]:
    """The files of the file:line locations inside ``location``."""
    if isinstance(location, mlir.FileLineColLoc):
        return [location.filename]
    if isinstance(location, mlir.NameLoc):
        return source_files(location.child_loc)
    if isinstance(location, mlir.CallSiteLoc):
        return source_files(location.callee) + source_files(location.caller)
    if isinstance(location, mlir.FusedLoc):
        return [f for loc in location.locations for f in source_files(loc)]
    return []


def test_three_fusion_configurations_import_the_application_once(gcn, imports):
    model, inputs, plan, expected = gcn
    program = fuseflow.Program(model, inputs, plan=plan)
    for fusion, kernels in KERNEL_COUNTS.items():
        compiled = program.compile(fuseflow.Schedule(fusion=fusion))
        assert compiled.mlir("sam").count('"sam.graph"') == kernels, fusion
        result = compiled.simulate(*inputs)
        assert torch.allclose(result.output, expected, rtol=1e-4, atol=1e-5), fusion
    assert len(imports) == 1


def test_compile_imports_on_every_call(gcn, imports):
    model, inputs, plan, _ = gcn
    for fusion in ("unfused", "full"):
        fuseflow.compile(model, inputs, fuseflow.Schedule(fusion=fusion), plan=plan)
    assert len(imports) == 2


def test_imported_linalg_ops_name_their_fx_node_module_and_source(gcn):
    model, inputs, plan, _ = gcn
    program = fuseflow.Program(model, inputs, plan=plan)
    nodes = {n.name: n for n in program.exported.graph.nodes if n.op == "call_function"}
    ops = linalg_ops(program.module)
    assert ops
    modules = {}
    for op in ops:
        node = string_attr(op, NODE_ATTR)
        assert node in nodes, f"{op.name}: {node} is no node of the exported program"
        assert location_node(op.location) == node
        assert any(f.endswith(("apps/gcn.py", "apps/gnn.py"))           # the model's source
                   for f in source_files(op.location)), op.location
        modules.setdefault(string_attr(op, MODULE_ATTR), set()).add(nodes[node].target.__name__)
    # Four matmuls in the two layers, the bias adds with them, relu and softmax at the root.
    assert set(modules) == {"layer1", "layer2", ""}
    assert {"matmul.default", "add.Tensor"} <= modules["layer1"] == modules["layer2"]
    assert modules[""] == {"relu.default", "softmax.int"}
    assert sum(op.name == "linalg.matmul" for op in ops) == 4
    assert not any(GROUP_ATTR in op.attributes for op in ops)


def test_groups_are_attributes_of_a_copy_and_the_import_is_unchanged(gcn):
    model, inputs, plan, expected = gcn
    program = fuseflow.Program(model, inputs, plan=plan)
    imported = program.mlir()
    groups = (("layer1", "relu"), ("layer2", "softmax"))
    compiled = program.compile(fuseflow.Schedule(fusion=groups))
    assert program.mlir() == imported
    assert not any(GROUP_ATTR in op.attributes for op in linalg_ops(program.module))
    linalg = compiled.mlir("linalg")
    assert 'fuseflow.group = "g0:layer1+relu"' in linalg
    assert 'fuseflow.group = "g1:layer2+softmax"' in linalg
    assert compiled.mlir("sam").count('"sam.graph"') == 2
    assert torch.allclose(compiled.simulate(*inputs).output, expected, rtol=1e-4, atol=1e-5)
    again = program.compile(fuseflow.Schedule(fusion=groups))
    assert again.mlir("sam") == compiled.mlir("sam")


def test_no_kernel_tag_in_locations_or_the_exported_graph(gcn):
    model, inputs, plan, _ = gcn
    program = fuseflow.Program(model, inputs, plan=plan)
    compiled = program.compile(fuseflow.Schedule(fusion="partial"))
    texts = [program.module.operation.get_asm(enable_debug_info=True),
             compiled.module.operation.get_asm(enable_debug_info=True)]
    texts += [str(n.meta.get("stack_trace")) for n in program.exported.graph.nodes]
    assert not any("fuseflow-kernel:" in text for text in texts)


def test_mlir_text_is_parsed_once_and_compiled_per_schedule():
    text = get_kernel_text("spmm")
    program = fuseflow.Program(text)
    assert program.input_names == ["arg0", "arg1"]
    first = program.compile()
    second = program.compile(fuseflow.Schedule(order=("d0", "d1", "d2")))
    assert first.mlir("sam") == fuseflow.compile(text).mlir("sam")
    assert first.mlir("sam") != second.mlir("sam")
    assert 'order = ["d0", "d1", "d2"]' in second.mlir("kernels")
    with pytest.raises(ValueError, match="fusion groups refer to a PyTorch model"):
        program.compile(fuseflow.Schedule(fusion=(("layer1",),)))


def get_kernel_text(name: str) -> str:
    from fuseflow.kernels import KERNELS

    kernel = KERNELS[name]
    return mlir.import_torch(kernel.module(), kernel.inputs(0.5))


UNLOCATED = """
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %e = tensor.empty() : tensor<4xf32>
  %0 = linalg.exp ins(%a : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc(unknown)
  %1 = linalg.abs ins(%0 : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc(%1loc)
  %2 = linalg.exp ins(%1 : tensor<4xf32>) outs(%e : tensor<4xf32>) -> tensor<4xf32> loc(unknown)
  return %2 : tensor<4xf32>
}
""".replace("%1loc", 'callsite("abs_1"("m.py":3:0) at "f.py":9:0)')


def test_an_op_whose_location_names_no_node_takes_its_user_s_or_producer_s():
    from fuseflow.frontend import annotate_nodes

    with mlir.new_context():
        module = mlir.Module.parse(UNLOCATED)
        annotate_nodes(module, {"abs_1": "layer"})
        ops = linalg_ops(module)
        assert [location_node(op.location) for op in ops] == [None, "abs_1", None]
        assert [string_attr(op, NODE_ATTR) for op in ops] == ["abs_1"] * 3
        assert [string_attr(op, MODULE_ATTR) for op in ops] == ["layer"] * 3

"""The reference engine: whole graphs, hand-traced timing, bounded FIFOs, deadlock, dispatch."""

import dataclasses

import numpy as np
import pytest

from fuseflow.sim.arch import Arch
from fuseflow.sim.engines import ENGINES, DeadlockError, StreamError, run
from fuseflow.sim.formats import FiberTree, LevelSpec, TensorFormat
from fuseflow.sim.graph import Block, BlockGraph
from fuseflow.sim.tokens import format_stream

B = np.array([[0, 1, 0, 2], [0, 0, 0, 0], [3, 4, 0, 5]], dtype=np.float32)
C = np.array([0, 10, 0, 100], dtype=np.float32)


def spmv_graph() -> BlockGraph:
    """x_i = sum_j B_ij c_j with B CSR (input 0) and c a compressed vector (input 1)."""
    return BlockGraph([
        Block("root", "root", (), ("r0",)),
        Block("bc_root", "broadcast", ("r0",), ("r0_B", "r0_c")),
        Block("scan_Bi", "scan", ("r0_B",), ("crd_i", "ref_Bi"), {"tensor": 0, "level": 0}),
        Block("bc_i", "broadcast", ("crd_i",), ("crd_i_w", "crd_i_rep")),
        Block("scan_Bj", "scan", ("ref_Bi",), ("crd_Bj", "ref_Bj"), {"tensor": 0, "level": 1}),
        Block("repsig_i", "repsiggen", ("crd_i_rep",), ("sig_i",)),
        Block("rep_c", "repeat", ("r0_c", "sig_i"), ("ref_c",)),
        Block("scan_cj", "scan", ("ref_c",), ("crd_cj", "ref_cj"), {"tensor": 1, "level": 0}),
        Block("isect_j", "intersect", ("crd_Bj", "crd_cj", "ref_Bj", "ref_cj"), ("crd_j", "ref_B", "ref_cc"),
              {"ref_groups": [1, 1]}),
        Block("arr_B", "array", ("ref_B",), ("val_B",), {"tensor": 0}),
        Block("arr_c", "array", ("ref_cc",), ("val_c",), {"tensor": 1}),
        Block("mul", "alu", ("val_B", "val_c"), ("prod",), {"op": "mul"}),
        Block("red_j", "reduce", ("prod",), ("x",), {"kind": "sum"}),
        Block("write_i", "level_write", ("crd_i_w",), (), {"result": 0, "level": 0}),
        Block("write_x", "value_write", ("x",), (), {"result": 0}),
    ], [TensorFormat.dense((3,))])


def spmv_inputs():
    return [FiberTree.from_dense(B, TensorFormat.csr(B.shape)),
            FiberTree.from_dense(C, TensorFormat((4,), (LevelSpec("compressed", 0),)))]


def text(trace, ch):
    return format_stream(t for t, _ in trace[ch])


def test_csr_spmv_worked_example_token_by_token():
    res = run(spmv_graph(), spmv_inputs(), trace=True)
    tr = res.trace
    assert text(tr, "r0") == "0 D"
    assert text(tr, "crd_i") == "0 1 2 S0 D" and text(tr, "ref_Bi") == "0 1 2 S0 D"
    assert text(tr, "crd_Bj") == "1 3 S0 S0 0 1 3 S1 D"
    assert text(tr, "ref_Bj") == "0 1 S0 S0 2 3 4 S1 D"
    assert text(tr, "sig_i") == "R R R S0 D"
    assert text(tr, "crd_cj") == "1 3 S0 1 3 S0 1 3 S1 D"
    assert text(tr, "crd_j") == "1 3 S0 S0 1 3 S1 D"
    assert text(tr, "ref_B") == "0 1 S0 S0 3 4 S1 D"
    assert text(tr, "ref_cc") == "0 1 S0 S0 0 1 S1 D"
    assert text(tr, "prod") == "10.0 200.0 S0 S0 40.0 500.0 S1 D"  # a*c1 b*c3 S0 S0 d*c1 e*c3 S1 D
    assert text(tr, "x") == "210.0 0.0 540.0 S0 D"
    np.testing.assert_array_equal(res.outputs[0].to_dense(), B @ C)
    assert res.outputs[0].fmt == TensorFormat.dense((3,))


def test_spmv_statistics():
    res = run(spmv_graph(), spmv_inputs())
    s = res.summary()
    assert s["ops"] == 4 + 4  # 4 multiplies, 4 accumulations
    assert res.blocks["scan_Bj"].crd_reads == 5 and res.blocks["scan_Bj"].ref_reads == 6
    assert res.blocks["arr_B"].val_reads == 4 and s["val_writes"] == 3
    assert res.blocks["isect_j"].tokens_in["crd_cj"] == 10
    assert s["cycles"] == res.cycles == max(b.cycles for b in res.blocks.values())
    assert s["bytes_moved"] == 4 * (s["reads"] + s["writes"])
    assert res.trace is None


def chain_graph(size=3):
    return BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("scan", "scan", ("r",), ("crd", "ref"), {"tensor": None, "size": size}),
        Block("write", "level_write", ("crd",), (), {"result": 0, "level": 0}),
        Block("values", "value_write", ("ref",), (), {"result": 0}),
    ], [TensorFormat.dense((size,))])


def test_root_scanner_writer_timing_by_hand():
    # root: 0@1, D@2.  scan: gets 0 at 1; crds at 2, 3, 4; S0 (after peeking D@2) at 5; D at 6.
    # writer: dequeues at 2, 3, 4, 5, 6, one step each: final clock 7.
    res = run(chain_graph(), [], trace=True)
    assert [s for _, s in res.trace["crd"]] == [2, 3, 4, 5, 6]
    assert res.blocks["root"].cycles == 2 and res.blocks["scan"].cycles == 6
    assert res.blocks["write"].cycles == 7 and res.cycles == 7
    np.testing.assert_array_equal(res.outputs[0].to_dense(), [0, 1, 2])


def test_fifo_depth_one_halves_throughput_by_hand():
    # Element k waits for element k-1 to be dequeued, plus one: the scanner sends its crd
    # tokens at 1+1, 3+1, 5+1, 7+1 and D at 9+1; the writer ends at 11.
    res = run(chain_graph(), [], Arch(fifo_depth=1), trace=True)
    assert [s for _, s in res.trace["crd"]] == [2, 4, 6, 8, 10]
    assert res.cycles == 11
    np.testing.assert_array_equal(res.outputs[0].to_dense(), [0, 1, 2])


def test_fifo_depth_two_is_enough_for_a_chain():
    assert run(chain_graph(), [], Arch(fifo_depth=2)).cycles == 7


def hold_graph():
    """crdhold fed by a scanner directly (outer) and through a second scanner (inner)."""
    return BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("scan_i", "scan", ("r",), ("crd_i", "ref_i"), {"tensor": None, "size": 2}),
        Block("scan_j", "scan", ("ref_i",), ("crd_j", "ref_j"), {"tensor": None, "size": 3}),
        Block("hold", "crdhold", ("crd_j", "crd_i"), ("inner", "outer")),
        Block("write_i", "level_write", ("outer",), (), {"result": 0, "level": 0}),
        Block("write_j", "level_write", ("inner",), (), {"result": 0, "level": 1}),
        Block("values", "value_write", ("ref_j",), (), {"result": 0}),
    ], [TensorFormat.coo((2, 3))])


def test_unequal_paths_deadlock_with_depth_one():
    # scan_i cannot enqueue its second crd_i until hold pops the first; hold pops it only
    # after the inner fiber's closing stop, which scan_j emits only after it sees ref_i's
    # next token, which scan_i has not sent.
    with pytest.raises(DeadlockError) as err:
        run(hold_graph(), [], Arch(fifo_depth=1))
    msg = str(err.value)
    assert "'scan_i' waits for space on channel 'crd_i'" in msg
    assert "'scan_j' waits for a token on channel 'ref_i'" in msg
    assert "'hold' waits for a token on channel 'crd_j'" in msg
    assert {"scan_i": "crd_i", "scan_j": "ref_i", "hold": "crd_j"}.items() <= err.value.blocked.items()


def test_same_graph_runs_with_deeper_fifos():
    res = run(hold_graph(), [], Arch(fifo_depth=2))
    unbounded = run(hold_graph(), [])
    np.testing.assert_array_equal(res.outputs[0].to_dense(), np.arange(6, dtype=np.float32).reshape(2, 3))
    assert res.cycles >= unbounded.cycles


def test_stream_ending_early_is_reported():
    graph = BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("rep", "repeat", ("r", "sig"), ("out",)),
        Block("root2", "root", (), ("c",)),
        Block("rsg", "repsiggen", ("c",), ("sig",)),
    ], [])
    with pytest.raises(StreamError, match="repeat signal D while the input holds 0"):
        run(graph, [])


def test_missing_input_tensor_names_the_block():
    with pytest.raises(StreamError, match="block 'scan_cj' \\(scan\\): reads input tensor 1 but 1 inputs were given"):
        run(spmv_graph(), spmv_inputs()[:1])


def test_engine_dispatch_and_arch_errors():
    assert "reference" in ENGINES
    with pytest.raises(ValueError, match="valid engines: reference"):
        run(chain_graph(), [], engine="warp")
    with pytest.raises(ValueError, match="valid kinds: root, scan"):
        Arch(block_costs={"scanner": (1, 1)})
    with pytest.raises(ValueError, match="fifo_depth"):
        Arch(fifo_depth=0)
    arch = Arch(block_costs={"alu": (3, 2)})
    assert (arch.cost("alu").latency, arch.cost("alu").initiation_interval) == (3, 2)
    assert arch.cost("broadcast").initiation_interval == 0 and arch.cost("scan").latency == 1
    assert hash(arch) == hash(dataclasses.replace(arch))


def test_latency_and_interval_parameters_scale_timing():
    slow = run(chain_graph(), [], Arch(latency=2))
    # root -> scanner and scanner -> writer each take one cycle longer: 7 + 2
    assert slow.cycles == 9
    assert run(chain_graph(), [], Arch(initiation_interval=2)).cycles > 7


def spmv_dcsr_output_graph():
    """y = B (copy) written as DCSR: crddrop removes empty rows."""
    return BlockGraph([
        Block("root", "root", (), ("r",)),
        Block("scan_i", "scan", ("r",), ("crd_i", "ref_i"), {"tensor": 0, "level": 0}),
        Block("scan_j", "scan", ("ref_i",), ("crd_j", "ref_j"), {"tensor": 0, "level": 1}),
        Block("drop", "crddrop", ("crd_j", "crd_i"), ("inner", "outer")),
        Block("arr", "array", ("ref_j",), ("val",), {"tensor": 0}),
        Block("write_i", "level_write", ("outer",), (), {"result": 0, "level": 0}),
        Block("write_j", "level_write", ("inner",), (), {"result": 0, "level": 1}),
        Block("write_v", "value_write", ("val",), (), {"result": 0}),
    ], [TensorFormat.dcsr(B.shape)])


def test_crddrop_feeds_a_compressed_output():
    res = run(spmv_dcsr_output_graph(), spmv_inputs()[:1])
    out = res.outputs[0]
    assert out.crd[0].tolist() == [0, 2] and out.pos[1].tolist() == [0, 2, 5]
    np.testing.assert_array_equal(out.to_dense(), B)


def parallel_graph(lanes):
    """Rows of B dealt over lanes: each lane scans its rows, sums them; joins restore order."""
    blocks = [
        Block("root", "root", (), ("r",)),
        Block("scan_i", "scan", ("r",), ("crd_i", "ref_i"), {"tensor": 0, "level": 0}),
        Block("fork", "fork", ("ref_i",), tuple(f"l{p}" for p in range(lanes))),
        Block("bc_i", "broadcast", ("crd_i",), ("crd_i_w", "crd_i_c", "crd_i_v")),
        Block("join_c", "join", ("crd_i_c",) + tuple(f"c{p}" for p in range(lanes)), ("crd_j",),
              {"depth": 1}),
        Block("join_v", "join", ("crd_i_v",) + tuple(f"s{p}" for p in range(lanes)), ("sums",),
              {"depth": 0}),
        Block("bc_j", "broadcast", ("crd_j",), ("crd_j_out",)),
        Block("write_i", "level_write", ("crd_i_w",), (), {"result": 0, "level": 0}),
        Block("write_s", "value_write", ("sums",), (), {"result": 0}),
    ]
    for p in range(lanes):
        blocks += [
            Block(f"scan_j{p}", "scan", (f"l{p}",), (f"c{p}", f"f{p}"), {"tensor": 0, "level": 1}),
            Block(f"arr{p}", "array", (f"f{p}",), (f"v{p}",), {"tensor": 0}),
            Block(f"red{p}", "reduce", (f"v{p}",), (f"s{p}",)),
        ]
    return BlockGraph(blocks, [TensorFormat.dense((ROWS.shape[0],))])


# 7 rows, rows 1, 4 and 5 empty: every lane gets at least one row, unevenly for 2, 3, 4 lanes.
ROWS = np.zeros((7, 5), np.float32)
ROWS[0, [1, 3]], ROWS[2, 0], ROWS[3, [0, 2, 4]], ROWS[6, 4] = [1, 2], 3, [4, 5, 6], 7


@pytest.mark.parametrize("lanes", [1, 2, 3, 4])
def test_parallel_lanes_give_the_same_streams_and_result(lanes):
    tree = FiberTree.from_dense(ROWS, TensorFormat.csr(ROWS.shape))
    res = run(parallel_graph(lanes), [tree], trace=True)
    np.testing.assert_array_equal(res.outputs[0].to_dense(), ROWS.sum(axis=1))
    assert text(res.trace, "crd_j_out") == "1 3 S0 S0 0 S0 0 2 4 S0 S0 S0 4 S1 D"


def test_coo_output_written_through_a_coordinate_hold():
    res = run(hold_graph(), [])
    out = res.outputs[0]
    assert out.crd[0].tolist() == [0, 0, 0, 1, 1, 1] and out.crd[1].tolist() == [0, 1, 2, 0, 1, 2]
    np.testing.assert_array_equal(out.to_dense(), np.arange(6, dtype=np.float32).reshape(2, 3))


@pytest.mark.parametrize("seed", range(4))
def test_random_spmv_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    rows, cols = rng.integers(1, 9, size=2)
    b = ((rng.random((rows, cols)) < 0.4) * rng.integers(-4, 5, (rows, cols))).astype(np.float32)
    c = ((rng.random(cols) < 0.6) * rng.integers(-4, 5, cols)).astype(np.float32)
    graph = spmv_graph()
    graph.outputs = [TensorFormat.dense((rows,))]
    inputs = [FiberTree.from_dense(b, TensorFormat.csr(b.shape)),
              FiberTree.from_dense(c, TensorFormat((cols,), (LevelSpec("compressed", 0),)))]
    res = run(graph, inputs)
    np.testing.assert_array_equal(res.outputs[0].to_dense(), b @ c)  # small integers: exact


def test_statistics_are_json_ready():
    import json

    res = run(spmv_graph(), spmv_inputs())
    json.dumps(res.summary())
    json.dumps([b.to_dict() for b in res.blocks.values()])
    assert res.blocks["write_x"].to_dict()["bytes_written"] == 12

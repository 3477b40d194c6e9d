"""The pre-parse check of MLIR text (fuseflow.textcheck): finds what crashes the parser and
nothing else, and never fails on arbitrary text."""

from hypothesis import given, settings
from hypothesis import strategies as st

from fuseflow.textcheck import find_crashing_constructs


def test_encoding_without_map_is_located():
    text = "// header\n  #CSR = #sparse_tensor.encoding<{ posWidth = 32, crdWidth = 8 }>\n"
    [problem] = find_crashing_constructs(text)
    assert (problem.line, problem.col) == (2, 10)
    assert "'map'" in problem.message


def test_every_encoding_without_map_is_reported():
    text = ("func.func @f(%a: tensor<4xf32, #sparse_tensor.encoding<{}>>,\n"
            "             %b: tensor<4xf32, #sparse_tensor.encoding< { } >>) { return }\n")
    assert [(p.line, p.col) for p in find_crashing_constructs(text)] == [(1, 32), (2, 32)]


def test_encodings_with_map_comments_and_strings_are_accepted():
    text = ('#A = #sparse_tensor.encoding<{ map = (d0, d1) -> (d0 : dense, d1 : compressed) }>\n'
            '#B = #sparse_tensor.encoding<{posWidth = 8, map = (d0) -> (d0 : compressed)}>\n'
            '// #sparse_tensor.encoding<{}>\n'
            'func.func @f() attributes {s = "#sparse_tensor.encoding<{}>"} { return }\n')
    assert find_crashing_constructs(text) == []


def test_malformed_encodings_are_left_to_the_parser():
    assert find_crashing_constructs("#A = #sparse_tensor.encoding<{ map = (d0) -> (d0\n") == []


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet="#<>{}()[],=:-\"/ \nmapd0sparse_tensor.encoding", max_size=80))
def test_arbitrary_text_never_raises(text):
    for problem in find_crashing_constructs(text):
        assert problem.line >= 1 and problem.col >= 1

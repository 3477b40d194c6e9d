// Two chunks separated by a custom split marker (test/tools/split-input-file.mlir).
func.func @one() {
  return
}
// =====
func.func @two() {
  return
}

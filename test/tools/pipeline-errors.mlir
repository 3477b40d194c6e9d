// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(canonicalize' 2>&1 | filecheck %s --check-prefix=UNBALANCED
// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-bogus)' 2>&1 | filecheck %s --check-prefix=UNKNOWN-PASS
// RUN: not fuseflow-opt %s --sam-bogus 2>&1 | filecheck %s --check-prefix=UNKNOWN-FLAG
// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(no-such-upstream-pass)' 2>&1 | filecheck %s --check-prefix=UNKNOWN-UPSTREAM
// RUN: not fuseflow-opt %s --fuseflow-partition=mode=bogus 2>&1 | filecheck %s --check-prefix=BAD-VALUE
// RUN: not fuseflow-opt %s --sam-verify='level=1' 2>&1 | filecheck %s --check-prefix=BAD-OPTION
// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(fuseflow-to-kernels{mode=full})' 2>&1 | filecheck %s --check-prefix=PIPELINE-OPTION
// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(func.func(sam-verify))' 2>&1 | filecheck %s --check-prefix=NESTED
// RUN: not fuseflow-opt %s --pass-pipeline='builtin.module(cse)' --sam-verify 2>&1 | filecheck %s --check-prefix=BOTH
// RUN: not fuseflow-opt %s --verify-each=maybe 2>&1 | filecheck %s --check-prefix=BAD-BOOL
// RUN: not fuseflow-opt %s --no-such-flag 2>&1 | filecheck %s --check-prefix=BAD-FLAG
// RUN: not fuseflow-opt %s.missing 2>&1 | filecheck %s --check-prefix=NO-INPUT

// Tests that bad pipelines, passes, options and flags fail before any input is processed,
// with a message naming the problem and, where there is a choice, the valid choices.
// UNBALANCED: fuseflow-opt: error: unbalanced brackets or quotes in pipeline 'builtin.module(canonicalize'
// UNKNOWN-PASS: fuseflow-opt: error: unknown pass 'fuseflow-bogus'; registered passes and pipelines: {{.*}}fuseflow-to-dataflow{{.*}}sam-verify
// UNKNOWN-FLAG: fuseflow-opt: error: unknown pass '--sam-bogus'; registered passes and pipelines: {{.*}}fuseflow-verify-kernels{{.*}}sam-verify
// UNKNOWN-UPSTREAM: fuseflow-opt: error: cannot parse pipeline element 'no-such-upstream-pass': {{.*}}'no-such-upstream-pass' does not refer to a registered pass or pass pipeline
// BAD-VALUE: fuseflow-opt: error: invalid value 'bogus' for option 'mode' of pass 'fuseflow-partition'; valid choices: {{.*}}unfused
// BAD-OPTION: fuseflow-opt: error: unknown option 'level' for pass 'sam-verify'; valid options: none
// PIPELINE-OPTION: fuseflow-opt: error: named pipeline 'fuseflow-to-kernels' takes no options
// NESTED: fuseflow-opt: error: FuseFlow pass 'sam-verify' must appear at the top level of the pipeline, not nested in 'func.func(...)'
// BOTH: fuseflow-opt: error: --pass-pipeline cannot be combined with pass flags (--sam-verify)
// BAD-BOOL: fuseflow-opt: error: invalid value 'maybe' for --verify-each; valid choices: true, false
// BAD-FLAG: fuseflow-opt: error: unknown command line argument '--no-such-flag'; try 'fuseflow-opt --help'
// NO-INPUT: fuseflow-opt: error: cannot open input file '{{.*}}pipeline-errors.mlir.missing': No such file or directory
func.func @f() {
  return
}

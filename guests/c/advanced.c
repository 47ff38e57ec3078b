/*
 * Test guest reproducing upstream's examples/advanced (upstream's guest/testdata): NodeNumber on
 * the pod's spec.nodeName, exporting only enqueue, prefilter, prescore and score, and
 * ending _start with proc_exit(0) as upstream's binary does.
 */
#define NODENUMBER_FROM_SPEC 1
#define NODENUMBER_SCORE_ONLY 1
#define NODENUMBER_EXIT_IN_START 1
#include "nodenumber.c"

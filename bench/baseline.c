/* bench/baseline.c -- the memory work of the bench programs as plain C
 * loops, timed on this machine in the same run, so that the simulator's
 * speed is reported as a ratio (machines here are shared and noisy). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* swap_stream.yaml: 500000 x (load 16 int32, store 16 int32, add one). */
static double swap_stream(void) {
  static volatile int32_t buf[16];
  int32_t v[16], old[16];
  for (int l = 0; l < 16; l++) v[l] = l;
  double t0 = now();
  for (int i = 0; i < 500000; i++)
    for (int l = 0; l < 16; l++) {
      old[l] = buf[l];
      buf[l] = v[l];
      v[l] = old[l] + 1;
    }
  return now() - t0;
}

/* copy_stream.yaml: 256 chunks of 256 KiB, HBM -> VMEM -> HBM. */
static double copy_stream(void) {
  size_t chunk = 65536 * 4;
  uint8_t *x = calloc(256, chunk), *y = calloc(256, chunk), *buf = calloc(1, chunk);
  if (!x || !y || !buf) exit(1);
  memset(x, 1, 256 * chunk); /* touch the pages first, as the simulator's iota init does */
  memset(y, 0, 256 * chunk);
  double t0 = now();
  for (int c = 0; c < 256; c++) {
    memcpy(buf, x + c * chunk, chunk);
    memcpy(y + c * chunk, buf, chunk);
  }
  double t = now() - t0;
  volatile uint8_t sink = y[12345];
  (void)sink;
  free(x), free(y), free(buf);
  return t;
}

int main(int argc, char **argv) {
  const char *which = argc > 1 ? argv[1] : "";
  double best = 1e9;
  for (int k = 0; k < 5; k++) { /* the best of five: the machine is shared */
    double t = !strcmp(which, "swap_stream") ? swap_stream() : copy_stream();
    if (t < best) best = t;
  }
  printf("%.9f\n", best);
  return 0;
}

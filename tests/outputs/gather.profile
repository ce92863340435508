# gather.yaml --profile: the table after the headline, worked out by hand
# (gather.stats derives each figure); % is of the 130 subcore cycles.
profile: 130 subcore cycles (1 subcore(s) x 130 cycles, less 0 finished), by program line:
  line    cycles      %  instrs    issue     load      dma      sem  barrier     bytes  source
    16       103   79.2       1        1        0      102        0        0       128  - sync_copy: {src: acc, dst: out}
    15        15   11.5      10       15        0        0        0        0        64  - addupdate_scatter: {ref: acc, indices: ["iota(16) % 4 * 8"...
    14        12    9.2       8        9        3        0        0        0        64  - load_gather: {ref: t, indices: ["3 + 2 * iota(16)"], out: g}

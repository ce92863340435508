/* isa/loc.h -- a position in the program file.  Instructions carry the
 * position of the operation they came from; diagnostics, faults and traces
 * print it as file:line:col. */
#ifndef SC_LOC_H
#define SC_LOC_H

typedef struct {
  const char *file; /* the path as given on the command line */
  int line, col;    /* 1-based; 0 when unknown */
} Loc;

#endif

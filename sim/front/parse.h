/* sim/front/parse.h -- the parser of the format's two string languages.
 *
 * Grammar (Python's precedence, lowest first):
 *
 *   expr    := and ('or' and)*            and  := not ('and' not)*
 *   not     := 'not' not | cmp            cmp  := bor (CMPOP bor)*
 *   bor     := bxor ('|' bxor)*           bxor := band ('^' band)*
 *   band    := shift ('&' shift)*         shift:= sum (('<<'|'>>') sum)*
 *   sum     := term (('+'|'-') term)*     term := unary (('*'|'/'|'//'|'%') unary)*
 *   unary   := ('-'|'+'|'~') unary | postfix
 *   postfix := primary ( '[' subs ']' | '.at' '[' subs ']'
 *                      | '.bitcast' '(' DTYPE ')' | '.reshape' '(' args ')' )*
 *   primary := INT | FLOAT | true | false | None | '...' | '(' expr ')'
 *            | '(' expr ',' ... ')' | '[' args ']' | DOTTED-NAME [ '(' args ')' ]
 *   subs    := entry (',' entry)* [',']   entry := '...' | [expr] ':' [expr] [':' [expr]] | expr
 *   args    := [arg (',' arg)*]           arg  := NAME '=' expr | expr
 *
 * The operators, their spellings and levels are EXPR_OPS (isa/value.h); a
 * call's name is resolved to its BUILTINS row (lowering/builtins.h) here,
 * once, into Expr.builtin.
 *
 * Positions: every node's Loc is the file position of its first character,
 * computed from the position of the string's first character in the file. */
#ifndef SC_PARSE_H
#define SC_PARSE_H

#include "../../lowering/expr.h"

/* Parses `text` (which starts at file position `at`).  Returns the tree, or
 * NULL with *d set (IN_EXPR, pointing at the offending character). */
Expr *expr_parse(Arena *a, const char *text, Loc at, Diag *d);
/* The same with an explicit position for every byte of text (map has
 * strlen(text) + 1 entries): what the loader uses, since quoted, escaped
 * and multi-line YAML scalars do not map to the file column by column. */
Expr *expr_parse_mapped(Arena *a, const char *text, const Loc *map, Diag *d);
#endif

"""The product of the convolutions' prepared constants (docs/kernel-abi.md): C text compiled
into every blocked convolution kernel (gen_conv.py; its kernels share one data template, so
once per process, beside the support object's compile rather than in it: in support.c it made
that object 0.3 -> 0.9 s of C compiler on the critical path of a cold compile).  A kernel
passes `ge_pk_product` to the support object's `ge_support_conv` when its filter was packed
(`ge_kernel_prepared`), nothing otherwise.
"""
from __future__ import annotations

from .cgen import fill

__all__ = ["K_BLOCK", "PANEL", "COLUMNS", "CHANNELS", "SLACK", "MOST_TAPS", "CONDITION",
           "STEP_C", "SOURCE", "pack_floats"]

K_BLOCK = 512           # the product's blocks of k (at most)
PANEL = 24              # a packed panel's columns: its widest tile's 3 x 8
COLUMNS = 192           # columns packed per block: a multiple of PANEL
CHANNELS = 4            # output channels per panel of the packed filter
SLACK = 16              # floats after a pack area and a padded image: runs copied 8 at a time
MOST_TAPS = 64          # packed from a padded image up to this many taps (kh * kw), else im2col
# where the product exists (GCC's target attributes and x86 builtins); its CPU check at run time
CONDITION = "defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)"

# the blocks of k: their size, the same for every split of the work (both sides use it)
STEP_C = """\
static int64_t ge_pk_step(int64_t k, int64_t most)
{
    const int64_t blocks = (k + most - 1) / most;
    return (k + blocks - 1) / blocks;
}"""


def pack_floats(k: int, columns: int) -> int:
    """A job's area for the packed columns of a product over `k` (gen_conv's workspace): a
    block of k (STEP_C's size) by a block of at most `columns` columns, in whole panels."""
    blocks = -(-k // K_BLOCK)
    return -(-k // blocks) * min(COLUMNS, -(-columns // PANEL) * PANEL) + SLACK

_TEXT = r"""
/* The product of a prepared convolution (docs/kernel-abi.md, "Prepared constants"), on x86-64
   CPUs with AVX2 and FMA: y = bias + filter x b, then + residual, relu, applied as each tile
   of y is stored.  Filter (packed once by ge_support_conv_prepare): per group, per block of
   k (at most GE_PK_KC, their count fixed by k), panels of 4 output channels, each k's 4
   values together, zero rows past the last channel.  Tiles of 4 channels x 24 pixels in 12
   registers; b (a matrix, or a padded image: ge_pk_pack) packed 24 columns at a time in
   blocks of GE_PK_NC (the job's pack area of the workspace); a last panel of 1-4 columns is computed for several channel panels at once
   (independent sums).  Every value is its products summed in k order with FMA, block by
   block, so its bits do not depend on how rows and columns are split between threads or
   calls.  Elsewhere GE_PK_PRODUCT is 0 and the convolution keeps the sgemm. */
#if @CONDITION@
#define GE_PREPARED 1
@STEP@
typedef float ge_v8 __attribute__((vector_size(32)));
typedef float ge_v4 __attribute__((vector_size(16)));
typedef int32_t ge_v8i __attribute__((vector_size(32)));
/* the same, loaded from any float's address (the workspace's and state's alignment is not
   the ABI's concern) */
typedef float ge_v8u __attribute__((vector_size(32), aligned(4)));
typedef float ge_v4u __attribute__((vector_size(16), aligned(4)));
/* the vectors are written out (the tiles, column kernels and stores statement by statement),
   so all of it is compiled at -O2: the same speed as -O3 (A/B 1.016 / 0.980), 0.46 -> 0.28 s
   of C compiler for this text, which every cold compile pays.  Nor are the packing's short
   copy loops made memmove calls (a call per run of 24 floats cost 2.5 % of ResNet-50) */
#define GE_PK_FN __attribute__((target("avx2,fma"), \
                                optimize("O2", "no-tree-loop-distribute-patterns")))
/* the tiles' loops start a cache line: where the text before them put a loop (GCC aligns
   to 16) made ResNet-50 5 % slower or faster from one build of this text to the next */
#define GE_PK_KERNEL __attribute__((target("avx2,fma"), optimize("O2", "align-loops=64")))
enum { GE_PK_NR = @PK_NR@, GE_PK_KC = @PK_KC@, GE_PK_NC = @PK_NC@ };

struct ge_pk_out {
    float *y;
    int64_t ldy;
    const float *bias, *res;    /* per row / laid out like y; NULL: none */
    int first, last, relu;      /* the first / last block of k */
};

@STORES@
/* rows r0 .. r0+mr-1, columns j0 .. j0+nr-1 of y from a part tile's sums t: the same, one
   value at a time */
GE_PK_FN __attribute__((noinline))
static void ge_pk_part(float t[4][GE_PK_NR], int64_t r0, int64_t mr, int64_t j0, int64_t nr,
                       const struct ge_pk_out *o)
{
    for (int64_t r = 0; r < mr; ++r) {
        float *y = o->y + (r0 + r) * o->ldy + j0;
        const float *rr = o->res ? o->res + (r0 + r) * o->ldy + j0 : 0;
        const float b = o->bias ? o->bias[r0 + r] : 0.0f;
        for (int64_t j = 0; j < nr; ++j) {
            float v = t[r][j];
            if (!o->first) v += y[j];
            else if (o->bias) v += b;
            if (o->last && rr) v += rr[j];
            if (o->last && o->relu) v = v > 0.0f ? v : 0.0f;
            y[j] = v;
        }
    }
}

typedef void (*ge_pk_tile_fn)@SIGNATURE@;

@KERNELS@
static ge_pk_tile_fn ge_pk_tile_for(int64_t nr)
{
    return nr > 8 ? ge_pk_tile24 : nr > 4 ? ge_pk_tile8 : ge_pk_cols4;
}

/* rows 0 .. kc-1, columns 0 .. nr-1 of b (ldb apart) -> bp[kc][24], zeros past nr */
GE_PK_FN
static void ge_pk_pack_b(const float *b, int64_t ldb, int64_t kc, int64_t nr,
                         float *restrict bp)
{
    for (int64_t k = 0; k < kc; ++k) {
        const float *row = b + k * ldb;
        float *out = bp + GE_PK_NR * k;
        int64_t j = 0;
        if (nr == GE_PK_NR) {       /* 3 vectors (a memcpy call cost 2 % of ResNet-50) */
            for (int v = 0; v < 3; ++v)
                *(ge_v8u *)(out + 8 * v) = *(const ge_v8u *)(row + 8 * v);
            continue;
        }
        for (; j < nr; ++j) out[j] = row[j];
        for (; j < GE_PK_NR; ++j) out[j] = 0.0f;
    }
}

/* 8 floats of a run: p[0] .. p[7] at stride 1, p[0], p[2], .. p[14] at stride 2 */
GE_PK_FN static inline ge_v8 ge_pk_run8(const float *p, int64_t step)
{
    const ge_v8 lo = *(const ge_v8u *)p;
    return step == 1 ? lo : __builtin_shuffle(lo, *(const ge_v8u *)(p + 8),
                                              (ge_v8i){0, 2, 4, 6, 8, 10, 12, 14});
}

/* the lanes of a where m is set, of b elsewhere */
GE_PK_FN static inline ge_v8 ge_pk_blend(ge_v8 a, ge_v8 b, ge_v8i m)
{
    return (ge_v8)(((ge_v8i)a & m) | ((ge_v8i)b & ~m));
}

/* 24 floats of runs from a where m0 .. m2 are set, from b elsewhere (each call site's
   constant step makes its own copy) */
GE_PK_FN static inline void ge_pk_blend24(float *out, const float *a, const float *b,
                                          int64_t step, ge_v8i m0, ge_v8i m1, ge_v8i m2)
{
    *(ge_v8u *)out = ge_pk_blend(ge_pk_run8(a, step), ge_pk_run8(b, step), m0);
    *(ge_v8u *)(out + 8) = ge_pk_blend(ge_pk_run8(a + 8 * step, step),
                                       ge_pk_run8(b + 8 * step, step), m1);
    *(ge_v8u *)(out + 16) = ge_pk_blend(ge_pk_run8(a + 16 * step, step),
                                        ge_pk_run8(b + 16 * step, step), m2);
}

/* rows p0 .. p0+kc-1, columns col .. col+nr-1 of the product's b -> bp[kc][24], zeros past
   nr.  From a padded image block (no im2col): a column is an output pixel, a row one input
   channel's tap, its value at pixel offset + tap offset of that channel's padded plane; the
   panel's pixels are runs along output rows.  A whole panel of one run, or of two with the
   padded row's gap between (the usual panel of a row of 14 or more pixels), is 3 blends of
   the first run's floats and those past the gap: no branch, no call.  Other panels copy
   each run, at stride 1 8 floats at a time, past its end into what the next run or row
   writes (conv_product.SLACK floats after the pack area and after the image). */
GE_PK_FN
static void ge_pk_pack(const struct ge_conv_b *s, int64_t p0, int64_t kc, int64_t col,
                       int64_t nr, float *restrict bp)
{
    if (s->b) {
        ge_pk_pack_b(s->b + p0 * s->ldb + col, s->ldb, kc, nr, bp);
        return;
    }
    const int64_t step = s->step;
    int64_t at[GE_PK_NR], len[GE_PK_NR], from[GE_PK_NR], runs = 0;
    for (int64_t j = 0; j < nr; j += len[runs++]) {
        const int64_t q = s->q0 + col + j, oi = q / s->ow, oj = q % s->ow;
        at[runs] = j;
        len[runs] = s->ow - oj < nr - j ? s->ow - oj : nr - j;
        from[runs] = oi * s->row + oj * step;
    }
    const int blend = nr == GE_PK_NR && runs <= 2 && step <= 2;
    const int64_t gap = runs == 2 ? from[1] - from[0] - step * len[0] : 0;
    ge_v8i m0, m1, m2;
    for (int l = 0; l < 8; ++l) {
        m0[l] = l < len[0] ? -1 : 0;
        m1[l] = 8 + l < len[0] ? -1 : 0;
        m2[l] = 16 + l < len[0] ? -1 : 0;
    }
    int64_t ci = p0 / s->taps, t = p0 % s->taps;
    for (int64_t k = 0; k < kc; ++k) {
        const float *plane = s->xp + ci * s->hwp + s->tap[t];
        float *out = bp + GE_PK_NR * k;
        if (blend) {
            const float *a = plane + from[0];
            if (step == 1)
                ge_pk_blend24(out, a, a + gap, 1, m0, m1, m2);
            else
                ge_pk_blend24(out, a, a + gap, 2, m0, m1, m2);
        } else {
            for (int64_t r = 0; r < runs; ++r)
                if (step == 1)
                    for (int64_t e = 0; e < len[r]; e += 8)
                        *(ge_v8u *)(out + at[r] + e) = *(const ge_v8u *)(plane + from[r] + e);
                else
                    for (int64_t e = 0; e < len[r]; ++e)
                        out[at[r] + e] = plane[from[r] + e * step];
            for (int64_t j = nr; j < GE_PK_NR; ++j) out[j] = 0.0f;
        }
        if (++t == s->taps) {
            t = 0;
            ++ci;
        }
    }
}

/* y[m][n] (ldy) = bias + filter x b[k][n] (src), + res, relu.  filter: one group's packed
   filter (`panels` panels), its rows from panel q0; bb: the job's pack area */
GE_PK_FN
static void ge_pk_product(int64_t m, int64_t n, int64_t k, const float *filter,
                          int64_t panels, int64_t q0, const struct ge_conv_b *src, float *y,
                          int64_t ldy, const float *bias, const float *res, int relu,
                          float *bb)
{
    const int64_t step = ge_pk_step(k, GE_PK_KC);
    for (int64_t p0 = 0; p0 < k; p0 += step) {
        const int64_t kc = k - p0 < step ? k - p0 : step;
        const struct ge_pk_out o = {y, ldy, bias, res, p0 == 0, p0 + kc >= k, relu};
        const float *block = filter + 4 * p0 * panels;
        for (int64_t c0 = 0; c0 < n; c0 += GE_PK_NC) {
            const int64_t nc = n - c0 < GE_PK_NC ? n - c0 : GE_PK_NC;
            for (int64_t j0 = 0; j0 < nc; j0 += GE_PK_NR)
                ge_pk_pack(src, p0, kc, c0 + j0, nc - j0 < GE_PK_NR ? nc - j0 : GE_PK_NR,
                           bb + j0 * kc);
            /* the last panel of 1-4 columns: 4 filter panels (2 for 2-4 columns) at a time,
               right after their other panels (their filter rows still in the cache) */
            const int64_t tail = nc % GE_PK_NR <= 4 ? nc % GE_PK_NR : 0;
            const int64_t rows = tail == 1 ? 16 : 8, strip = tail ? m / rows * rows : 0;
            const ge_pk_tile_fn strip_fn = tail == 1 ? ge_pk_strip1 : ge_pk_strip4;
            for (int64_t i = 0; i < m; i += 4) {
                const float *a = block + 4 * (q0 + i / 4) * kc;
                const int64_t mr = m - i < 4 ? m - i : 4, end = i < strip ? nc - tail : nc;
                for (int64_t j0 = 0; j0 < end; j0 += GE_PK_NR) {
                    const int64_t nr = end - j0 < GE_PK_NR ? end - j0 : GE_PK_NR;
                    ge_pk_tile_for(nr)(kc, a, i, mr, bb + j0 * kc, c0 + j0, nr, &o);
                }
                if (i < strip && (i + 4) % rows == 0)
                    strip_fn(kc, a - 4 * (rows / 4 - 1) * kc, i + 4 - rows, rows,
                             bb + (nc - tail) * kc, c0 + nc - tail, tail, &o);
            }
        }
    }
}

#define GE_PK_PRODUCT ge_pk_product
#else
#define GE_PREPARED 0
#define GE_PK_PRODUCT 0
#endif
"""


# The tiles and column kernels are written out statement by statement (named accumulators, no
# loops over rows or vectors): at -O2 their sums stay in registers as the -O3 loops' did (at
# -O2 those loops ran 4.7x slower), so they need no -O3 and its compile time
_SIGNATURE = ("(int64_t kc, const float *a, int64_t r0, int64_t mr, const float *bp, "
              "int64_t j0, int64_t nr, const struct ge_pk_out *o)")


def _tile(name: str, nv: int) -> str:
    """4 channels (filter panel a) x 8*nv columns (b panel bp): 4*nv vector sums."""
    acc = [[f"c{r}{v}" for v in range(nv)] for r in range(4)]
    lines = ["GE_PK_KERNEL", f"static void {name}{_SIGNATURE}", "{",
             "    ge_v8 " + ", ".join(f"{c} = {{0}}" for row in acc for c in row) + ";",
             "    for (int64_t k = 0; k < kc; ++k, a += 4, bp += GE_PK_NR) {",
             "        const ge_v8 " + ", ".join(f"b{v} = *(const ge_v8u *)(bp + {8 * v})"
                                                for v in range(nv)) + ";",
             "        ge_v8 w;"]
    for r in range(4):
        lines.append(f"        w = (ge_v8){{a[{r}], a[{r}], a[{r}], a[{r}], a[{r}], a[{r}], "
                     f"a[{r}], a[{r}]}};")
        lines.append("        " + " ".join(f"{c} = __builtin_ia32_vfmaddps256(w, b{v}, {c});"
                                           for v, c in enumerate(acc[r])))
    rows = ", ".join("{" + ", ".join(acc[r] + ["{0}"] * (3 - nv)) + "}" for r in range(4))
    lines += ["    }",
              f"    const ge_v8 sums[4][3] = {{{rows}}};",
              f"    if (mr == 4 && nr == {8 * nv}) {{",
              f"        ge_pk_store{nv}(sums, r0, j0, o);",
              "        return;",
              "    }",
              "    float t[4][GE_PK_NR];",
              f"    for (int r = 0; r < 4; ++r) memcpy(t[r], sums[r], {nv} * sizeof(ge_v8));",
              "    ge_pk_part(t, r0, mr, j0, nr, o);",
              "}"]
    return "\n".join(lines)


def _store(nv: int) -> str:
    """A full tile's store (rows r0 .. r0+3, 8*nv columns from j0): the sums, plus y after the
    first block of k or else the bias, then after the last block the residual and relu (x > 0
    ? x : 0, a NaN too gives 0, as ge_finish_rows).  Written out like the tiles (at -O2 a loop
    over rows and vectors was not unrolled: 5 -> 6.7 % of ResNet-50's samples; -O3 for it
    alone cost 0.17 s of C compiler); one copy for all tiles of a width."""
    lines = ["GE_PK_FN __attribute__((noinline))",
             f"static void ge_pk_store{nv}(const ge_v8 sums[4][3], int64_t r0, int64_t j0,",
             "                          const struct ge_pk_out *o)",
             "{",
             "    ge_v8 x;"]
    for r in range(4):
        lines += ["    {",
                  f"        float *y = o->y + (r0 + {r}) * o->ldy + j0;",
                  f"        const float *res = o->res ? o->res + (r0 + {r}) * o->ldy + j0 : 0;",
                  f"        const float b = o->bias ? o->bias[r0 + {r}] : 0.0f;"]
        for v in range(nv):
            lines += [f"        x = sums[{r}][{v}];",
                      f"        if (!o->first) x += *(const ge_v8u *)(y + {8 * v});",
                      "        else if (o->bias) x += (ge_v8){b, b, b, b, b, b, b, b};",
                      f"        if (o->last && res) x += *(const ge_v8u *)(res + {8 * v});",
                      "        if (o->last && o->relu) "
                      "x = (ge_v8)((ge_v8i)x & (ge_v8i)(x > (ge_v8){0}));",
                      f"        *(ge_v8u *)(y + {8 * v}) = x;"]
        lines.append("    }")
    lines.append("}")
    return "\n".join(lines)


def _columns(name: str, nc: int, np_: int) -> str:
    """nc last columns for np_ filter panels (4*np_ rows) at once: each panel's 4 rows one
    4-lane vector, np_*nc independent sums."""
    acc = [[f"q{q}j{j}" for j in range(nc)] for q in range(np_)]
    lines = ["GE_PK_KERNEL", f"static void {name}{_SIGNATURE}", "{",
             "    ge_v4 " + ", ".join(f"{c} = {{0}}" for row in acc for c in row) + ";",
             "    for (int64_t k = 0; k < kc; ++k) {",
             "        const ge_v4 " + ", ".join(f"w{q} = *(const ge_v4u *)(a + 4 * ({q} * kc + k))"
                                                for q in range(np_)) + ";",
             "        float s;",
             "        ge_v4 b;"]
    for j in range(nc):
        lines.append(f"        s = bp[GE_PK_NR * k + {j}]; b = (ge_v4){{s, s, s, s}};")
        lines.append("        " + " ".join(f"{acc[q][j]} = __builtin_ia32_vfmaddps(w{q}, b, "
                                           f"{acc[q][j]});" for q in range(np_)))
    lines += ["    }", "    float t[4][GE_PK_NR];"]
    for q in range(np_):
        lines.append("    for (int r = 0; r < 4; ++r) {")
        lines += [f"        t[r][{j}] = {acc[q][j]}[r];" for j in range(nc)]
        rows = f"mr - {4 * q} < 4 ? mr - {4 * q} : 4"
        lines += ["    }", f"    ge_pk_part(t, r0 + {4 * q}, {rows}, j0, nr, o);"]
    lines.append("}")
    return "\n".join(lines)


_KERNELS = "\n\n".join(
    [_tile("ge_pk_tile24", 3), _tile("ge_pk_tile8", 1), _columns("ge_pk_cols4", 4, 1),
     _columns("ge_pk_strip1", 1, 4), _columns("ge_pk_strip4", 4, 2)])

_VALUES = {"CONDITION": CONDITION, "STEP": STEP_C, "KERNELS": _KERNELS, "PK_KC": K_BLOCK,
           "SIGNATURE": _SIGNATURE,
           "STORES": "\n\n".join(_store(nv) for nv in (3, 1)),
           "PK_NC": COLUMNS, "PK_NR": PANEL}
SOURCE = fill(_TEXT, _VALUES)

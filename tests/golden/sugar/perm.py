"""The expected values of init_permutation.yaml: the permutation init
recomputed from its definition (docs/format.md, sim/front/load_sugar.h)."""
M = (1 << 64) - 1


def sm(x):
    x = (x + 0x9e3779b97f4a7c15) & M
    x = ((x ^ (x >> 30)) * 0xbf58476d1ce4e5b9) & M
    x = ((x ^ (x >> 27)) * 0x94d049bb133111eb) & M
    return x ^ (x >> 31)


def permutation(seed, n):
    p = list(range(n))
    for i in range(n - 1, 0, -1):
        j = sm(seed + i) % (i + 1)
        p[i], p[j] = p[j], p[i]
    return p


if __name__ == "__main__":
    idx = permutation(42, 16)
    out = [0] * 16
    for k, i in enumerate(idx):
        out[i] = 100 + k  # o.at[idx] = x: o[idx[k]] = x[k]
    print("idx:", idx)
    print("o:", out)

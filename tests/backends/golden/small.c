/* kera-hls CPU golden model of `f(a: i8, b: i8, n: u8, t: [u16; 3], k: u2) -> ([i8; 4], u16, (u24, bool), i16)`
   graph 64f3b5f844abb037387a4c4dc30c4f84168926254e06fcd51128523717d4df44, 21 nodes in schedule order (single-stage). Generated: do not edit. */
#include <stddef.h>
#include <stdint.h>
_Static_assert(sizeof(int) <= 4, "containers must not promote to int");
static inline uint32_t k_pop32(uint32_t x) {
    x = x - ((x >> 1) & (uint32_t)0x5555555555555555u);
    x = (x & (uint32_t)0x3333333333333333u) + ((x >> 2) & (uint32_t)0x3333333333333333u);
    x = (x + (x >> 4)) & (uint32_t)0x0f0f0f0f0f0f0f0fu;
    return (uint32_t)(x * (uint32_t)0x0101010101010101u) >> (32 - 8);
}
static inline uint32_t k_clz32(uint32_t x) { return x ? (uint32_t)__builtin_clz(x) : (uint32_t)32; }
static inline uint32_t k_ctz32(uint32_t x) { return x ? (uint32_t)__builtin_ctz(x) : (uint32_t)32; }
/* Division is total and branch-free: the divisor 0 becomes 1, then the result is fixed up. */
static inline uint32_t k_udiv32(uint32_t a, uint32_t b) {
    const uint32_t zero = (uint32_t)(b == 0);
    return (a / (b | zero)) & (zero - 1);
}
static inline uint32_t k_urem32(uint32_t a, uint32_t b) {
    const uint32_t zero = (uint32_t)(b == 0);
    return (a % (b | zero)) | (a & ((uint32_t)0 - zero));
}
/* Truncating signed division of sign-extended patterns, on magnitudes (no UB, no traps). */
static inline uint32_t k_sdiv32(uint32_t a, uint32_t b) {
    const uint32_t na = a >> (32 - 1), nb = b >> (32 - 1), zero = (uint32_t)(b == 0);
    const uint32_t ua = (a ^ ((uint32_t)0 - na)) + na, ub = (b ^ ((uint32_t)0 - nb)) + nb;
    const uint32_t q = ua / (ub | zero), s = na ^ nb;
    return ((q ^ ((uint32_t)0 - s)) + s) & (zero - 1);
}
static inline uint32_t k_srem32(uint32_t a, uint32_t b) {
    const uint32_t na = a >> (32 - 1), nb = b >> (32 - 1), zero = (uint32_t)(b == 0);
    const uint32_t ua = (a ^ ((uint32_t)0 - na)) + na, ub = (b ^ ((uint32_t)0 - nb)) + nb;
    const uint32_t r = ua % (ub | zero);
    return (((r ^ ((uint32_t)0 - na)) + na) & (zero - 1)) | (a & ((uint32_t)0 - zero));
}
/* Arithmetic shift right of a sign-extended pattern by s < W, in unsigned arithmetic. */
static inline uint32_t k_asr32(uint32_t a, unsigned s) {
    const uint32_t m = (uint32_t)1 << (32 - 1);
    return (uint32_t)(((a ^ m) >> s) - (m >> s));
}
/* Rotate the n-bit field u left by r < n. */
static inline uint32_t k_rotl32(uint32_t u, unsigned r, unsigned n) {
    return r == 0 ? u : (uint32_t)((u << r) | (u >> (n - r)));
}

static inline uint64_t k_pop64(uint64_t x) {
    x = x - ((x >> 1) & (uint64_t)0x5555555555555555u);
    x = (x & (uint64_t)0x3333333333333333u) + ((x >> 2) & (uint64_t)0x3333333333333333u);
    x = (x + (x >> 4)) & (uint64_t)0x0f0f0f0f0f0f0f0fu;
    return (uint64_t)(x * (uint64_t)0x0101010101010101u) >> (64 - 8);
}
static inline uint64_t k_clz64(uint64_t x) { return x ? (uint64_t)__builtin_clzll(x) : (uint64_t)64; }
static inline uint64_t k_ctz64(uint64_t x) { return x ? (uint64_t)__builtin_ctzll(x) : (uint64_t)64; }
/* Division is total and branch-free: the divisor 0 becomes 1, then the result is fixed up. */
static inline uint64_t k_udiv64(uint64_t a, uint64_t b) {
    const uint64_t zero = (uint64_t)(b == 0);
    return (a / (b | zero)) & (zero - 1);
}
static inline uint64_t k_urem64(uint64_t a, uint64_t b) {
    const uint64_t zero = (uint64_t)(b == 0);
    return (a % (b | zero)) | (a & ((uint64_t)0 - zero));
}
/* Truncating signed division of sign-extended patterns, on magnitudes (no UB, no traps). */
static inline uint64_t k_sdiv64(uint64_t a, uint64_t b) {
    const uint64_t na = a >> (64 - 1), nb = b >> (64 - 1), zero = (uint64_t)(b == 0);
    const uint64_t ua = (a ^ ((uint64_t)0 - na)) + na, ub = (b ^ ((uint64_t)0 - nb)) + nb;
    const uint64_t q = ua / (ub | zero), s = na ^ nb;
    return ((q ^ ((uint64_t)0 - s)) + s) & (zero - 1);
}
static inline uint64_t k_srem64(uint64_t a, uint64_t b) {
    const uint64_t na = a >> (64 - 1), nb = b >> (64 - 1), zero = (uint64_t)(b == 0);
    const uint64_t ua = (a ^ ((uint64_t)0 - na)) + na, ub = (b ^ ((uint64_t)0 - nb)) + nb;
    const uint64_t r = ua % (ub | zero);
    return (((r ^ ((uint64_t)0 - na)) + na) & (zero - 1)) | (a & ((uint64_t)0 - zero));
}
/* Arithmetic shift right of a sign-extended pattern by s < W, in unsigned arithmetic. */
static inline uint64_t k_asr64(uint64_t a, unsigned s) {
    const uint64_t m = (uint64_t)1 << (64 - 1);
    return (uint64_t)(((a ^ m) >> s) - (m >> s));
}
/* Rotate the n-bit field u left by r < n. */
static inline uint64_t k_rotl64(uint64_t u, unsigned r, unsigned n) {
    return r == 0 ? u : (uint64_t)((u << r) | (u >> (n - r)));
}

__attribute__((visibility("default")))
void kera_run(size_t blocks, void *const *bufs) {
    const uint32_t *restrict b0 = (const uint32_t *)bufs[0];  /* a */
    const uint32_t *restrict b1 = (const uint32_t *)bufs[1];  /* b */
    const uint32_t *restrict b2 = (const uint32_t *)bufs[2];  /* n */
    const uint32_t *restrict b3 = (const uint32_t *)bufs[3];  /* t[0] */
    const uint32_t *restrict b4 = (const uint32_t *)bufs[4];  /* t[1] */
    const uint32_t *restrict b5 = (const uint32_t *)bufs[5];  /* t[2] */
    const uint32_t *restrict b6 = (const uint32_t *)bufs[6];  /* k */
    uint32_t *restrict b7 = (uint32_t *)bufs[7];  /* result.0[0] */
    uint32_t *restrict b8 = (uint32_t *)bufs[8];  /* result.0[1] */
    uint32_t *restrict b9 = (uint32_t *)bufs[9];  /* result.0[2] */
    uint32_t *restrict b10 = (uint32_t *)bufs[10];  /* result.0[3] */
    uint32_t *restrict b11 = (uint32_t *)bufs[11];  /* result.1 */
    uint32_t *restrict b12 = (uint32_t *)bufs[12];  /* result.2.0 */
    uint32_t *restrict b13 = (uint32_t *)bufs[13];  /* result.2.1 */
    uint32_t *restrict b14 = (uint32_t *)bufs[14];  /* result.3 */
    for (size_t blk = 0; blk < blocks; ++blk) {
        for (size_t j = 0; j < 16; ++j) {
            const size_t i = blk * 16 + j;
            const uint32_t v0 = b0[i];
            const uint32_t v1 = b1[i];
            const uint32_t v2 = b2[i];
            const uint32_t v3 = b3[i];
            const uint32_t v4 = b4[i];
            const uint32_t v5 = b5[i];
            const uint32_t v6 = b6[i];
            const uint32_t v7 = ((((uint32_t)(k_sdiv32(v0, v1)) & 0xffu) ^ 0x80u) - 0x80u);
            const uint32_t v8 = k_srem32(v0, v1);
            const uint32_t v9 = ((((uint32_t)((v2) < 8u ? (uint32_t)(v0 << (v2)) : 0x0u) & 0xffu) ^ 0x80u) - 0x80u);
            const uint32_t v10 = k_asr32(v0, (unsigned)((v2) < 8u ? (v2) : 7u));
            const size_t k11 = v6 < 2u ? (size_t)v6 : 2u;
            const uint32_t a12[3] = {v3, v4, v5};
            const uint32_t v13 = a12[k11];
            const uint32_t v14 = ((uint32_t)(k_pop32(v13)) & 0xffffu);
            const uint32_t v15 = ((uint32_t)(k_rotl32(v13, (unsigned)((v2) % 16u), 16u)) & 0xffffu);
            const uint32_t v16 = ((uint32_t)((uint32_t)(v15 >> 4)) & 0xffu);
            const uint32_t v17 = ((uint32_t)(v16) << 16) | (uint32_t)(v15);
            const uint32_t v18 = (uint32_t)((v0 ^ 0x80000000u) < (v1 ^ 0x80000000u));
            const uint32_t v19 = ((((uint32_t)(v0 * v1) & 0xffffu) ^ 0x8000u) - 0x8000u);
            const uint32_t v20 = 0xffffffffu;
            const uint32_t v21 = v18 ? v19 : v20;
            b7[i] = v7;
            b8[i] = v8;
            b9[i] = v9;
            b10[i] = v10;
            b11[i] = v14;
            b12[i] = v17;
            b13[i] = v18;
            b14[i] = v21;
        }
    }
    (void)bufs;
}

"""The light kernels (RMSNorm, SiLU-and-mul, RoPE): fused Triton versions and torch fallbacks."""
from .runlog import log


def build(ctx):
    """Defines the light kernels (torch until self_check adopts Triton) and adds them to ctx."""
    # The names main() held, so that the body below reads as it did there.
    torch, F, triton, tl, dev, meta = ctx.torch, ctx.F, ctx.triton, ctx.tl, ctx.dev, ctx.meta
    randn = ctx.randn

    # ------------------------------------------------------------------------------------------
    # Light kernels: fused Triton versions (vLLM-like) and torch fallbacks.
    kern = {}
    if tl is not None:
        try:
            @triton.jit
            def _rmsnorm_kernel(x_ptr, w_ptr, y_ptr, stride, N, eps, BLOCK: tl.constexpr):
                row = tl.program_id(0)
                cols = tl.arange(0, BLOCK)
                mask = cols < N
                x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0).to(tl.float32)
                var = tl.sum(x * x, axis=0) / N
                rstd = 1.0 / tl.sqrt(var + eps)
                w = tl.load(w_ptr + cols, mask=mask, other=0.0).to(tl.float32)
                y = x * rstd * w
                tl.store(y_ptr + row * stride + cols, y.to(y_ptr.dtype.element_ty), mask=mask)

            @triton.jit
            def _silu_mul_kernel(x_ptr, y_ptr, D, BLOCK: tl.constexpr):
                t = tl.program_id(0)
                pid = tl.program_id(1)
                offs = pid * BLOCK + tl.arange(0, BLOCK)
                m = offs < D
                g = tl.load(x_ptr + t * 2 * D + offs, mask=m, other=0.0).to(tl.float32)
                u = tl.load(x_ptr + t * 2 * D + D + offs, mask=m, other=0.0).to(tl.float32)
                y = g / (1.0 + tl.exp(-g)) * u
                tl.store(y_ptr + t * D + offs, y.to(y_ptr.dtype.element_ty), mask=m)

            @triton.jit
            def _rope_neox_kernel(qkv_ptr, pos_ptr, cos_ptr, sin_ptr, row_stride, n_heads,
                                  HALF: tl.constexpr, BLOCK_H: tl.constexpr):
                # In place on the first n_heads heads (q heads then k heads) of one token row.
                t = tl.program_id(0)
                hb = tl.program_id(1)
                pos = tl.load(pos_ptr + t)
                d = tl.arange(0, HALF)
                h = hb * BLOCK_H + tl.arange(0, BLOCK_H)
                m = (h[:, None] < n_heads) & (d[None, :] < HALF)
                c = tl.load(cos_ptr + pos * HALF + d)[None, :]
                s = tl.load(sin_ptr + pos * HALF + d)[None, :]
                base = qkv_ptr + t * row_stride + h[:, None] * (2 * HALF) + d[None, :]
                x1 = tl.load(base, mask=m, other=0.0).to(tl.float32)
                x2 = tl.load(base + HALF, mask=m, other=0.0).to(tl.float32)
                tl.store(base, (x1 * c - x2 * s).to(qkv_ptr.dtype.element_ty), mask=m)
                tl.store(base + HALF, (x2 * c + x1 * s).to(qkv_ptr.dtype.element_ty), mask=m)

            def rmsnorm_triton(x, w, eps=1e-5):
                T, N = x.shape
                y = torch.empty_like(x)
                block = triton.next_power_of_2(N)
                _rmsnorm_kernel[(T,)](x, w, y, x.stride(0), N, eps, BLOCK=block,
                                      num_warps=8 if block <= 4096 else 16)
                return y

            def silu_mul_triton(x):
                T, D2 = x.shape
                D = D2 // 2
                y = torch.empty((T, D), device=x.device, dtype=x.dtype)
                _silu_mul_kernel[(T, triton.cdiv(D, 1024))](x, y, D, BLOCK=1024, num_warps=4)
                return y

            def rope_triton(qkv, pos, cos, sin, n_rot_heads, head_dim):
                T = qkv.shape[0]
                bh = 8
                _rope_neox_kernel[(T, triton.cdiv(n_rot_heads, bh))](
                    qkv, pos, cos, sin, qkv.stride(0), n_rot_heads, HALF=head_dim // 2,
                    BLOCK_H=bh, num_warps=4)
                return qkv

            kern.update(rmsnorm=rmsnorm_triton, silu_mul=silu_mul_triton, rope=rope_triton)
        except Exception as exc:  # noqa: BLE001
            meta.error("define triton kernels", exc)

    def rmsnorm_torch(x, w, eps=1e-5):
        xf = x.float()
        return (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float()).to(x.dtype)

    def silu_mul_torch(x):
        d = x.shape[1] // 2
        return F.silu(x[:, :d]) * x[:, d:]

    def rope_torch(qkv, pos, cos, sin, n_rot_heads, head_dim):
        T = qkv.shape[0]
        half = head_dim // 2
        v = qkv[:, : n_rot_heads * head_dim].view(T, n_rot_heads, head_dim)
        c = cos[pos].unsqueeze(1)
        s = sin[pos].unsqueeze(1)
        x1 = v[..., :half].float()
        x2 = v[..., half:].float()
        o1 = x1 * c - x2 * s
        o2 = x2 * c + x1 * s
        v[..., :half] = o1.to(qkv.dtype)
        v[..., half:] = o2.to(qkv.dtype)
        return qkv

    impl = dict(rmsnorm=rmsnorm_torch, silu_mul=silu_mul_torch, rope=rope_torch)
    meta.d["light_kernel_impl"] = dict(rmsnorm="torch", silu_mul="torch", rope="torch")

    def rel_err(a, b):
        a = a.double()
        b = b.double()
        return float((a - b).norm() / b.norm().clamp_min(1e-30))

    def self_check():
        """Check each Triton kernel against its torch reference; adopt it when it agrees."""
        tol = 2e-2
        for name in ("rmsnorm", "silu_mul", "rope"):
            if name not in kern:
                continue
            try:
                if name == "rmsnorm":
                    x = randn(37, 4096)
                    w = randn(4096)
                    err = rel_err(kern[name](x, w), rmsnorm_torch(x, w))
                elif name == "silu_mul":
                    x = randn(37, 2 * 1792)
                    err = rel_err(kern[name](x), silu_mul_torch(x))
                else:
                    hd, nh, extra = 128, 40, 8
                    qkv = randn(37, (nh + extra) * hd)
                    pos = torch.randint(0, 4096, (37,), device=dev)
                    ang = torch.rand(4096, hd // 2, device=dev, dtype=torch.float32) * 6.28
                    cos, sin = ang.cos(), ang.sin()
                    a = kern[name](qkv.clone(), pos, cos, sin, nh, hd)
                    b = rope_torch(qkv.clone(), pos, cos, sin, nh, hd)
                    err = rel_err(a, b)
                    # the heads past n_rot_heads (the v heads) must be untouched
                    untouched = bool(torch.equal(a[:, nh * hd:], qkv[:, nh * hd:]))
                    meta.d.setdefault("self_check", {})["rope_v_untouched"] = untouched
                    if not untouched:
                        err = float("inf")
                meta.d.setdefault("self_check", {})[name + "_rel_err"] = err
                if err < tol:
                    impl[name] = kern[name]
                    meta.d["light_kernel_impl"][name] = "triton"
                log("self-check %-8s rel err %.2e -> %s" % (name, err,
                                                             meta.d["light_kernel_impl"][name]))
            except Exception as exc:  # noqa: BLE001
                meta.error("self-check " + name, exc)

    ctx.impl = impl
    ctx.self_check = self_check

# source: public code (code-search hit; Entropix write-up): "attn_entropy = -jnp.sum(attention_probs * jnp.log2(jnp.clip(attention_probs, 1e-10, 1.0)), axis=-1)"
# exercise: attention_entropy
# accept: log2|bits|nats|natural log|base|ln\b
# why: uses log base 2 (bits) instead of the natural log (nats)
# base: base_einsum


def attention_entropy(weights):
    p = weights
    logp = torch.log2(p.clamp(min=torch.finfo(p.dtype).tiny))
    return -torch.einsum("...s,...s->...", p, logp)

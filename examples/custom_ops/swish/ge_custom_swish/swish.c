/* Swish for float32: y = x / (1 + exp(-alpha * x)).  GE_* macros: docs/custom-ops.md. */
int ge_kernel(void *const *inputs, void *const *outputs, void *workspace)
{
    const float *restrict x = (const float *)inputs[0];
    float *restrict y = (float *)outputs[0];
    const float alpha = (float)GE_ATTR_alpha;
    (void)workspace;
    for (int64_t i = 0; i < GE_OUT0_NUMEL; ++i)
        y[i] = x[i] / (1.0f + expf(-alpha * x[i]));
    return 0;
}

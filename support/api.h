/* support/api.h - the list of the public functions of pe.h and ffn.h, one row each:
       X(function, return type, (parameters))
   grouped by the header version that added them (a group macro per version), so that a
   program built against an older header (the bench's PREV= build) can leave a group out.

   The programs around the headers generate from it what they would otherwise name
   function by function: support/unit.h's table of function pointers and support/unit.c's
   getter (the bench and tools/fastmath_check.c call through it), the fuzz driver's target
   table (fuzz/fuzz.c) and the order of the bench's output (bench/bench.c: fn_rank). Each
   function's test, fuzz and bench specifics sit in its feature's file (features/).
   tools/house.sh checks that the list is exactly the headers' PEDEF / FFNDEF prototypes,
   with the same types, and counts the files that name each function. Adding a function:
   its header, a row here, and its feature's file. */
#ifndef SUPPORT_API_H
#define SUPPORT_API_H

/* pe.h 1.2 */
#define PE_API_102(X) \
    X(pe_status_string, const char *, (int status)) \
    X(pe_path, const char *, (void)) \
    X(pe_set_path, int, (const char *name)) \
    X(pe_path_name, const char *, (int i)) \
    X(pe_sinusoidal_table, int, (float *table, size_t max_len, size_t d_model)) \
    X(pe_sinusoidal_table_exact, int, (float *table, size_t max_len, size_t d_model)) \
    X(pe_sinusoidal_table_fast, int, (float *table, size_t max_len, size_t d_model)) \
    X(pe_add_batch_first, int, (float *out, const float *x, const float *table, size_t batch, \
                           size_t seq, size_t d_model, size_t max_len)) \
    X(pe_add_batch_first_inplace, int, (float *x, const float *table, size_t batch, \
                                   size_t seq, size_t d_model, size_t max_len)) \
    X(pe_add_seq_first, int, (float *out, const float *x, const float *table, size_t seq, \
                         size_t batch, size_t d_model, size_t max_len)) \
    X(pe_add_seq_first_inplace, int, (float *x, const float *table, size_t seq, size_t batch, \
                                 size_t d_model, size_t max_len)) \
    X(pe_embed, int, (float *out, const int32_t *ids, const float *wte, const float *wpe, \
                 size_t batch, size_t seq, size_t d_model, size_t vocab, \
                 size_t context_length)) \
    X(pe_embed_i64, int, (float *out, const int64_t *ids, const float *wte, const float *wpe, \
                     size_t batch, size_t seq, size_t d_model, size_t vocab, \
                     size_t context_length))

/* pe.h 1.3 */
#define PE_API_103(X) \
    X(pe_rope_inv_freq, int, (float *inv_freq, size_t rot, double theta)) \
    X(pe_rope_cache, int, (float *cos_out, float *sin_out, const float *inv_freq, size_t rot, \
                      float attention_factor, const int64_t *pos, int64_t start, size_t n)) \
    X(pe_rope_cache_exact, int, (float *cos_out, float *sin_out, size_t rot, double theta, \
                            const int64_t *pos, int64_t start, size_t n)) \
    X(pe_rope_apply, int, (float *out, const float *x, size_t batch, size_t seq, size_t heads, \
                      size_t head_dim, size_t rot, int layout, int pairing, \
                      const float *cos_c, const float *sin_c, size_t cache_len, \
                      const int64_t *pos, int64_t start)) \
    X(pe_rope_apply_direct, int, (float *out, const float *x, size_t batch, size_t seq, \
                             size_t heads, size_t head_dim, size_t rot, int layout, \
                             int pairing, const float *inv_freq, float attention_factor, \
                             const int64_t *pos, int64_t start)) \
    X(pe_rope_scaling_init, int, (pe_rope_scaling *s, int type)) \
    X(pe_rope_inv_freq_scaled, int, (float *inv_freq, float *attention_factor, size_t rot, \
                                double theta, const pe_rope_scaling *scaling, size_t seq_len)) \
    X(pe_alibi_slopes, int, (float *slopes, size_t heads, int mode)) \
    X(pe_alibi_bias, int, (float *bias, const float *slopes, size_t heads, size_t q_len, \
                      size_t k_len, size_t offset, int causal)) \
    X(pe_timestep_embedding, int, (float *out, const float *timesteps, size_t n, size_t dim, \
                              int flip_sin_to_cos, double downscale_freq_shift, double scale, \
                              double max_period))

/* pe.h 1.4 */
#define PE_API_104(X) \
    X(pe_add_batch_first_backward, int, (float *dtable, const float *dout, size_t batch, \
                                    size_t seq, size_t d_model, size_t max_len)) \
    X(pe_add_seq_first_backward, int, (float *dtable, const float *dout, size_t seq, \
                                  size_t batch, size_t d_model, size_t max_len)) \
    X(pe_embed_backward, int, (float *dwte, float *dwpe, const float *dout, \
                          const int32_t *ids, size_t batch, size_t seq, size_t d_model, \
                          size_t vocab, size_t context_length)) \
    X(pe_embed_i64_backward, int, (float *dwte, float *dwpe, const float *dout, \
                              const int64_t *ids, size_t batch, size_t seq, size_t d_model, \
                              size_t vocab, size_t context_length)) \
    X(pe_rope_apply_backward, int, (float *dx, const float *dout, size_t batch, size_t seq, \
                               size_t heads, size_t head_dim, size_t rot, int layout, \
                               int pairing, const float *cos_c, const float *sin_c, \
                               size_t cache_len, const int64_t *pos, int64_t start)) \
    X(pe_rope_apply_direct_backward, int, (float *dx, const float *dout, size_t batch, \
                                      size_t seq, size_t heads, size_t head_dim, size_t rot, \
                                      int layout, int pairing, const float *inv_freq, \
                                      float attention_factor, const int64_t *pos, \
                                      int64_t start))

/* ffn.h 1.2 */
#define FFN_API_102(X) \
    X(ffn_status_string, const char *, (int status)) \
    X(ffn_path, const char *, (void)) \
    X(ffn_set_path, int, (const char *name)) \
    X(ffn_path_name, const char *, (int i)) \
    X(ffn_linear, int, (float *y, const float *x, const float *weight, const float *bias, \
                   size_t rows, size_t in_features, size_t out_features)) \
    X(ffn_relu, int, (float *y, const float *x, size_t n)) \
    X(ffn_block_scratch_floats, size_t, (size_t rows, size_t d_model, size_t hidden)) \
    X(ffn_block, int, (float *y, const float *x, const float *w1, const float *b1, \
                  const float *w2, const float *b2, size_t rows, size_t d_model, \
                  size_t hidden, float *scratch, size_t scratch_floats)) \
    X(ffn_pack_floats, size_t, (size_t in_features, size_t out_features)) \
    X(ffn_pack_weight, int, (float *packed, size_t packed_floats, const float *weight, \
                        size_t in_features, size_t out_features)) \
    X(ffn_linear_packed, int, (float *y, const float *x, const float *packed, \
                          const float *bias, size_t rows, size_t in_features, \
                          size_t out_features)) \
    X(ffn_block_packed, int, (float *y, const float *x, const float *w1_packed, \
                         const float *b1, const float *w2_packed, const float *b2, \
                         size_t rows, size_t d_model, size_t hidden, float *scratch, \
                         size_t scratch_floats))

/* ffn.h 1.5 */
#define FFN_API_105(X) \
    X(ffn_activation, int, (float *y, const float *x, size_t n, int act)) \
    X(ffn_block_act, int, (float *y, const float *x, const float *w1, const float *b1, \
                      const float *w2, const float *b2, size_t rows, size_t d_model, \
                      size_t hidden, int act, float *scratch, size_t scratch_floats)) \
    X(ffn_block_act_packed, int, (float *y, const float *x, const float *w1_packed, \
                             const float *b1, const float *w2_packed, const float *b2, \
                             size_t rows, size_t d_model, size_t hidden, int act, \
                             float *scratch, size_t scratch_floats)) \
    X(ffn_gated_scratch_floats, size_t, (size_t rows, size_t d_model, size_t hidden)) \
    X(ffn_gated, int, (float *y, const float *x, const float *w_gate, const float *b_gate, \
                  const float *w_up, const float *b_up, const float *w_down, \
                  const float *b_down, size_t rows, size_t d_model, size_t hidden, int act, \
                  float *scratch, size_t scratch_floats)) \
    X(ffn_gated_packed, int, (float *y, const float *x, const float *w_gate_packed, \
                         const float *b_gate, const float *w_up_packed, const float *b_up, \
                         const float *w_down_packed, const float *b_down, size_t rows, \
                         size_t d_model, size_t hidden, int act, float *scratch, \
                         size_t scratch_floats)) \
    X(ffn_pack_weight_in_out, int, (float *packed, size_t packed_floats, \
                               const float *weight_in_out, size_t in_features, \
                               size_t out_features))

/* ffn.h 1.6 */
#define FFN_API_106(X) \
    X(ffn_pack_weight_strided, int, (float *packed, size_t packed_floats, const float *weight, \
                                size_t in_features, size_t out_features, size_t stride_out, \
                                size_t stride_in)) \
    X(ffn_linear_backward_scratch_floats, size_t, (size_t rows, size_t in_features, \
                                           size_t out_features)) \
    X(ffn_linear_backward, int, (float *dx, float *dw, float *db, const float *dy, \
                            const float *x, const float *w, size_t rows, size_t in_features, \
                            size_t out_features, float *scratch, size_t scratch_floats)) \
    X(ffn_activation_backward, int, (float *dx, const float *dy, const float *x, size_t n, \
                                int act)) \
    X(ffn_sgd_step, int, (float *param, float *momentum_buf, const float *grad, size_t n, \
                     float lr, float momentum, float dampening, float weight_decay, \
                     int nesterov, int first_step)) \
    X(ffn_adamw_step, int, (float *param, float *m, float *v, const float *grad, size_t n, \
                       float lr, float beta1, float beta2, float eps, float weight_decay, \
                       long step))

/* ffn.h 1.7 */
#define FFN_API_107(X) \
    X(ffn_block_act_train, int, (float *y, float *h, const float *x, const float *w1, \
                            const float *b1, const float *w2, const float *b2, size_t rows, \
                            size_t d_model, size_t hidden, int act, float *scratch, \
                            size_t scratch_floats)) \
    X(ffn_block_act_train_packed, int, (float *y, float *h, const float *x, \
                                   const float *w1_packed, const float *b1, \
                                   const float *w2_packed, const float *b2, size_t rows, \
                                   size_t d_model, size_t hidden, int act, float *scratch, \
                                   size_t scratch_floats)) \
    X(ffn_block_backward_scratch_floats, size_t, (size_t rows, size_t d_model, size_t hidden)) \
    X(ffn_block_act_backward, int, (float *dx, float *dw1, float *db1, float *dw2, float *db2, \
                               const float *dy, const float *x, const float *h, \
                               const float *w1, const float *w2, size_t rows, size_t d_model, \
                               size_t hidden, int act, float *scratch, size_t scratch_floats)) \
    X(ffn_gated_train, int, (float *y, float *gate_h, float *up_h, const float *x, \
                        const float *w_gate, const float *b_gate, const float *w_up, \
                        const float *b_up, const float *w_down, const float *b_down, \
                        size_t rows, size_t d_model, size_t hidden, int act, float *scratch, \
                        size_t scratch_floats)) \
    X(ffn_gated_train_packed, int, (float *y, float *gate_h, float *up_h, const float *x, \
                               const float *w_gate_packed, const float *b_gate, \
                               const float *w_up_packed, const float *b_up, \
                               const float *w_down_packed, const float *b_down, size_t rows, \
                               size_t d_model, size_t hidden, int act, float *scratch, \
                               size_t scratch_floats)) \
    X(ffn_gated_backward_scratch_floats, size_t, (size_t rows, size_t d_model, size_t hidden)) \
    X(ffn_gated_backward, int, (float *dx, float *dw_gate, float *db_gate, float *dw_up, \
                           float *db_up, float *dw_down, float *db_down, const float *dy, \
                           const float *x, const float *gate_h, const float *up_h, \
                           const float *w_gate, const float *w_up, const float *w_down, \
                           size_t rows, size_t d_model, size_t hidden, int act, \
                           float *scratch, size_t scratch_floats))

/* ffn.h 2.0 */
#define FFN_API_200(X) \
    X(ffn_gated_train_scratch_floats, size_t, (size_t rows, size_t d_model, size_t hidden)) \
    X(ffn_set_parallel_for, int, (ffn_parallel_for_fn fn, void *pool, int n_threads)) \
    X(ffn_weight_of, ffn_weight, (const void *data, int dtype, int layout)) \
    X(ffn_pack_bytes, size_t, (size_t in_features, size_t out_features, int dtype)) \
    X(ffn_pack, int, (void *packed, size_t packed_bytes, int dtype, const ffn_weight *w, \
                 size_t in_features, size_t out_features)) \
    X(ffn_linear_w, int, (float *y, const float *x, const ffn_weight *w, const float *bias, \
                     size_t rows, size_t in_features, size_t out_features)) \
    X(ffn_mlp_forward, int, (float *y, const float *x, size_t rows, const ffn_mlp *mlp, \
                        float *scratch, size_t scratch_floats)) \
    X(ffn_glu_forward, int, (float *y, const float *x, size_t rows, const ffn_glu *glu, \
                        float *scratch, size_t scratch_floats)) \
    X(ffn_linear_backward_w, int, (float *dx, float *dw, float *db, const float *dy, \
                              const float *x, const ffn_weight *w, size_t rows, \
                              size_t in_features, size_t out_features, float *scratch, \
                              size_t scratch_floats)) \
    X(ffn_mlp_train, int, (float *y, float *h, const float *x, size_t rows, const ffn_mlp *mlp, \
                      float *scratch, size_t scratch_floats)) \
    X(ffn_glu_train, int, (float *y, float *gate_h, float *up_h, const float *x, size_t rows, \
                      const ffn_glu *glu, float *scratch, size_t scratch_floats)) \
    X(ffn_mlp_backward, int, (const ffn_mlp_grads *grads, const float *dy, const float *x, \
                         const float *h, size_t rows, const ffn_mlp *mlp, float *scratch, \
                         size_t scratch_floats)) \
    X(ffn_glu_backward, int, (const ffn_glu_grads *grads, const float *dy, const float *x, \
                         const float *gate_h, const float *up_h, size_t rows, \
                         const ffn_glu *glu, float *scratch, size_t scratch_floats))

#define PE_API(X) PE_API_102(X) PE_API_103(X) PE_API_104(X)
#define FFN_API(X) FFN_API_102(X) FFN_API_105(X) FFN_API_106(X) FFN_API_107(X) FFN_API_200(X)
#define PEFFN_API(X) PE_API(X) FFN_API(X)

/* Every status of each header, in its enum's order (the last is the newest code): the
   error tests' names and the fuzz driver's status_string oracle read them from here;
   tools/house.sh checks them against the headers' enums. */
#define PE_STATUSES(X) X(PE_OK) X(PE_ERR_NULL) X(PE_ERR_ZERO_SIZE) X(PE_ERR_OVERFLOW) \
    X(PE_ERR_ODD_D_MODEL) X(PE_ERR_SEQ_TOO_LONG) X(PE_ERR_ALIAS) X(PE_ERR_ID_RANGE) X(PE_ERR_PATH) \
    X(PE_ERR_CPU) X(PE_ERR_ROT) X(PE_ERR_PARAM) X(PE_ERR_POSITION) X(PE_ERR_ENUM)
#define FFN_STATUSES(X) X(FFN_OK) X(FFN_ERR_NULL) X(FFN_ERR_ZERO_SIZE) X(FFN_ERR_OVERFLOW) \
    X(FFN_ERR_SCRATCH) X(FFN_ERR_ALIAS) X(FFN_ERR_PATH) X(FFN_ERR_CPU) X(FFN_ERR_ARG) \
    X(FFN_ERR_LR) X(FFN_ERR_MOMENTUM) X(FFN_ERR_DAMPENING) X(FFN_ERR_WEIGHT_DECAY) \
    X(FFN_ERR_NESTEROV) X(FFN_ERR_BETA1) X(FFN_ERR_BETA2) X(FFN_ERR_EPS) X(FFN_ERR_STEP) \
    X(FFN_ERR_THREADS) X(FFN_ERR_DTYPE) X(FFN_ERR_LAYOUT)

#endif /* SUPPORT_API_H */

// Op determinism: Keras's keras.utils.set_random_seed plus TensorFlow's
// enable_op_determinism in one process-wide switch. Runs with the same seed and thread
// count are bitwise equal whether it is on or off; on, results are also independent of the
// number of threads: the kernels whose reductions split across threads by the thread count
// (oneDNN's convolution filter gradient) run with a split of their own. Read when kernels
// are made (compile / the first fit of a batch size): set it before. Default: the
// NNFIT_DETERMINISTIC environment variable (off).
#pragma once

namespace nnfit {

void set_op_determinism(bool on);
bool op_determinism();

}  // namespace nnfit

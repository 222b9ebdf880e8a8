// Names that profile's files carry: the host name (as TF's port::Hostname) and the local
// date-time a profiling session is named after.
#pragma once
#include <string>

namespace nnfit::profile {

// gethostname(), or "localhost" when it fails or is empty.
std::string host_name();
// Local time as %Y_%m_%d_%H_%M_%S, the session directory name TensorBoard's profile plugin
// and Keras use.
std::string session_timestamp();

}  // namespace nnfit::profile

// The "vendor library" libnnfit_fake_missing.so needs: built, but where the loader does not
// look (as a libcudnn.so.9 or libmpi.so.40 missing on a user's machine).
extern "C" int nnfit_test_vendor_answer() { return 42; }

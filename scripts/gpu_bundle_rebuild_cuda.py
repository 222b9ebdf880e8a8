"""Rebuilds the GPU bundle's CUDA plugin (libnnfit_cuda.so) on the GPU machine, from the
bundle's source archive, with that machine's nvcc and g++: what a fix found there needs
(docs/gpu_bundle.md, "A fix on the GPU machine"). A whole rebuild is out of reach there
(no CMake, Ninja or development headers of oneDNN, HDF5 and the rest), but the plugin needs
only nnfit's own headers, CUDA's and cuDNN's. The compile commands are the build's own
(nnfit/share/nnfit/compile_commands.json, which carries the bundle's NNFIT_BUILD_ID, so
the carried nnfit accepts the result), with the paths moved; the link line is
cmake/plugins.cmake's for nnfit_cuda.

usage: python3 gpu_bundle_rebuild_cuda.py SOURCE_DIR OUT_DIR [-j N]
  SOURCE_DIR  the source tree (nnfit-source.tar.xz unpacked, then edited)
  OUT_DIR     where the objects and libnnfit_cuda.so go; then copy the .so over
              nnfit/lib/nnfit/libnnfit_cuda.so (keep the old one): nnfit and the test
              binaries load it from there (NNFIT_PLUGIN_DIR=OUT_DIR works too, but replaces
              the folder the NCCL and MPI plugins are found in)
Finds CUDA from nvcc on PATH, $CUDA_HOME or /usr/local/cuda, and cuDNN's header and library
there or in the Python's nvidia-cudnn wheel.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import shlex
import shutil
import site
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
COMMANDS = os.path.join(HERE, "..", "share", "nnfit", "compile_commands.json")
PLUGIN_OBJECTS = ("CMakeFiles/nnfit_cuda.dir/", "CMakeFiles/nnfit_cuda_plans.dir/")


def find_cuda():
    nvcc = shutil.which("nvcc")
    for root in ([os.path.dirname(os.path.dirname(os.path.realpath(nvcc)))] if nvcc else []) + \
            [os.environ.get("CUDA_HOME", ""), "/usr/local/cuda"]:
        if root and os.path.exists(os.path.join(root, "bin", "nvcc")):
            return root
    sys.exit("rebuild: no nvcc (PATH, CUDA_HOME, /usr/local/cuda)")


def first(patterns):
    for p in patterns:
        hits = sorted(glob.glob(p))
        if hits:
            return hits[0]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("source")
    ap.add_argument("out")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2)
    args = ap.parse_args()
    src = os.path.realpath(args.source)
    out = os.path.realpath(args.out)
    cuda = find_cuda()
    wheels = [d for r in site.getsitepackages() + [site.getusersitepackages()] for d in glob.glob(os.path.join(r, "nvidia"))]
    lib_dirs = [os.path.join(cuda, "lib64"), os.path.join(cuda, "lib"), os.path.join(cuda, "targets", "x86_64-linux", "lib")]
    lib_dirs += [d for w in wheels for d in glob.glob(os.path.join(w, "*", "lib")) + glob.glob(os.path.join(w, "*", "*", "lib"))]
    inc_dirs = [os.path.join(cuda, "include")] + [d for w in wheels for d in glob.glob(os.path.join(w, "*", "include"))]
    cudnn_h = first(os.path.join(d, "cudnn.h") for d in inc_dirs)
    libs = {name: first(os.path.join(d, name) for d in lib_dirs) for name in ("libcudart.so.13", "libcublasLt.so.13", "libcudnn.so.9")}
    print("CUDA", cuda, "cudnn.h", cudnn_h, "libraries", libs)
    if not cudnn_h or not all(libs.values()):
        sys.exit("rebuild: cudnn.h or a library not found (above)")

    entries = [e for e in json.load(open(COMMANDS)) if any(o in e["command"] for o in PLUGIN_OBJECTS)]
    old_root = entries[0]["file"].rsplit("/src/", 1)[0]
    old_cuda = "/usr/local/cuda"
    jobs = []
    for e in entries:
        cmd = shlex.split(e["command"])
        if os.path.basename(cmd[0]) == "ccache":
            cmd = cmd[1:]
        moved = []
        for a in cmd:
            a = a.replace(old_root + "/", src + "/")
            if "/usr/local/cuda" in a and cuda != old_cuda:
                a = a.replace(old_cuda, cuda)
            moved.append(a)
        if moved[0].endswith("nvcc"):
            moved[0] = os.path.join(cuda, "bin", "nvcc")
        else:
            moved[0] = os.environ.get("CXX", "g++")
        moved += ["-isystem", os.path.dirname(cudnn_h)] if not moved[0].endswith("nvcc") else ["-I" + os.path.dirname(cudnn_h)]
        obj = moved[moved.index("-o") + 1]
        os.makedirs(os.path.join(out, os.path.dirname(obj)), exist_ok=True)
        jobs.append((obj, moved))

    def run(job):
        obj, cmd = job
        r = subprocess.run(cmd, cwd=out, capture_output=True, text=True)
        return obj, r.returncode, r.stdout + r.stderr

    failed = False
    with concurrent.futures.ThreadPoolExecutor(args.j) as pool:
        for obj, code, text in pool.map(run, jobs):
            print(("ok  " if code == 0 else "FAIL ") + obj)
            if code:
                print(text)
                failed = True
    if failed:
        sys.exit(1)
    # cmake/plugins.cmake's link: a module, the shared CUDA runtime, cuBLASLt and cuDNN, run
    # paths for the bundle's layout (lib/nnfit/) as the gpu-bundle preset sets them.
    link = [os.environ.get("CXX", "g++"), "-fPIC", "-O3", "-DNDEBUG", "-Wl,--disable-new-dtags", "-shared",
            "-o", "libnnfit_cuda.so"] + [o for o, _ in jobs] + \
           ["-L" + os.path.join(cuda, "lib64"), "-L" + os.path.join(cuda, "targets", "x86_64-linux", "lib"),
            "-Wl,-rpath,$ORIGIN/../lib:$ORIGIN/..", libs["libcudnn.so.9"], libs["libcudart.so.13"], libs["libcublasLt.so.13"],
            "-lcudadevrt"]
    r = subprocess.run(link, cwd=out)
    if r.returncode:
        sys.exit(1)
    print("built", os.path.join(out, "libnnfit_cuda.so"))


if __name__ == "__main__":
    main()

# The Sinter lit suite: every .mlir, .sn and .pbtxt file under test/ that holds
# a RUN line.
import os

import lit.formats

config.name = "Sinter"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".sn", ".pbtxt", ".test"]
config.excludes = ["Inputs", "corpus", "CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.sinter_obj_root, "test")

config.environment["PATH"] = os.pathsep.join(
    [config.sinter_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
config.substitutions.append(("%sinter_src", config.sinter_src_root))
config.substitutions.append(("%sinter_obj", config.sinter_obj_root))
config.substitutions.append(("%std", os.path.join(config.sinter_src_root, "std")))
config.substitutions.append(("%python", config.python))
config.environment["PYTHONPATH"] = os.path.join(config.sinter_src_root, "test", "E2E")
# mlir-runner's printing helpers, for tests that run a lowered function.
config.substitutions.append(
    ("%mlir_c_runner_utils", os.path.join(config.llvm_library_dir, "libmlir_c_runner_utils.so")))
config.substitutions.append(("%examples", os.path.join(config.sinter_src_root, "examples")))

# Randomized tests use a fixed seed unless SINTER_TEST_SEED says otherwise
# (a number, or "random").
if "SINTER_TEST_SEED" in os.environ:
    config.environment["SINTER_TEST_SEED"] = os.environ["SINTER_TEST_SEED"]

# The CUDA target: ptxas checks the kernels' PTX where the toolkit is; the
# programs link where Sinter was built with the CUDA device.
ptxas = os.path.join(config.cuda_toolkit, "bin", "ptxas")
if os.access(ptxas, os.X_OK):
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
if config.sinter_have_cuda:
    config.available_features.add("cuda-runtime")
# CPUs 0 and 1 both allowed (thread placement tests run on them alone).
if {0, 1} <= os.sched_getaffinity(0):
    config.available_features.add("cpus-0-1")
# A machine with an NVIDIA GPU (its driver answers): tests of the no-GPU
# error do not apply there.
import shutil, subprocess
if shutil.which("nvidia-smi"):
    try:
        if subprocess.run(["nvidia-smi", "-L"], capture_output=True, timeout=20).returncode == 0:
            config.available_features.add("gpu")
    except (OSError, subprocess.TimeoutExpired):
        pass

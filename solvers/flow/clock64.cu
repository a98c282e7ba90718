// The SM's 64-bit cycle counter for numba.cuda kernels (numba-cuda exposes no clock64 intrinsic).
// Numba ABI: the int return is the status (0 = ok), the value comes back through the pointer.
// Declared in solvers/flow/wbpr_kernels.py as cuda.declare_device("read_clock64", types.int64()).
extern "C" __device__ int read_clock64(long long* r)
{
    *r = clock64();
    return 0;
}

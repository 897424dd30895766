// The numba_cuda backend's launcher: one XLA FFI handler that launches a kernel numba-cuda compiled to PTX.
//
// Python registers each compiled kernel once (eventjax_numba_cuda_add_module: a positive 63-bit key made from the
// PTX's content, the PTX, the entry's name); a call names its kernel by that key in the "module"
// attribute, with the launch configuration. The handler loads the PTX into the context that owns
// XLA's stream the first time that context asks for it, then packs every buffer the way numba's
// kernels take an array (meminfo, parent, nitems, itemsize, data, shape..., strides...) and
// launches on XLA's stream: no Python and no GIL on the call path.
//
// The CUDA driver is opened with dlopen, so this file builds with any C++ compiler and no CUDA headers.
#include <dlfcn.h>

#include <cstdint>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "xla/ffi/api/ffi.h"

namespace ffi = xla::ffi;

namespace {

using CUresult = int;
struct CUctx_st;
struct CUmod_st;
struct CUfunc_st;
struct CUstream_st;
using CUcontext = CUctx_st*;
using CUmodule = CUmod_st*;
using CUfunction = CUfunc_st*;
using CUstream = CUstream_st*;
using CUdeviceptr = unsigned long long;
constexpr int kMaxDynamicSharedBytes = 8;  // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
constexpr int64_t kDefaultSharedLimit = 48 * 1024;

struct Driver {
  CUresult (*getErrorString)(CUresult, const char**) = nullptr;
  CUresult (*ctxGetCurrent)(CUcontext*) = nullptr;
  CUresult (*ctxPushCurrent)(CUcontext) = nullptr;
  CUresult (*ctxPopCurrent)(CUcontext*) = nullptr;
  CUresult (*streamGetCtx)(CUstream, CUcontext*) = nullptr;
  CUresult (*moduleLoadData)(CUmodule*, const void*) = nullptr;
  CUresult (*moduleGetFunction)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*funcSetAttribute)(CUfunction, int, int) = nullptr;
  CUresult (*memsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream) = nullptr;
  CUresult (*launchKernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                           CUstream, void**, void**) = nullptr;
  std::string problem;  // why the driver cannot be used ('' when it can)
};

template <typename F>
void Bind(void* lib, const char* name, F* fn, std::string* problem) {
  *fn = reinterpret_cast<F>(dlsym(lib, name));
  if (*fn == nullptr && problem->empty()) problem->assign(std::string("libcuda has no ") + name);
}

const Driver& GetDriver() {
  static const Driver driver = [] {
    Driver d;
    void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (lib == nullptr) {
      const char* why = dlerror();
      d.problem = std::string("cannot load the CUDA driver (libcuda.so.1): ") + (why ? why : "unknown reason");
      return d;
    }
    Bind(lib, "cuGetErrorString", &d.getErrorString, &d.problem);
    Bind(lib, "cuCtxGetCurrent", &d.ctxGetCurrent, &d.problem);
    Bind(lib, "cuCtxPushCurrent_v2", &d.ctxPushCurrent, &d.problem);
    Bind(lib, "cuCtxPopCurrent_v2", &d.ctxPopCurrent, &d.problem);
    Bind(lib, "cuStreamGetCtx", &d.streamGetCtx, &d.problem);
    Bind(lib, "cuModuleLoadData", &d.moduleLoadData, &d.problem);
    Bind(lib, "cuModuleGetFunction", &d.moduleGetFunction, &d.problem);
    Bind(lib, "cuFuncSetAttribute", &d.funcSetAttribute, &d.problem);
    Bind(lib, "cuMemsetD8Async", &d.memsetD8Async, &d.problem);
    Bind(lib, "cuLaunchKernel", &d.launchKernel, &d.problem);
    return d;
  }();
  return driver;
}

std::string DriverMessage(const Driver& d, CUresult code) {
  const char* text = nullptr;
  if (d.getErrorString != nullptr) d.getErrorString(code, &text);
  return (text ? std::string(text) : std::string("CUDA error")) + " (CUresult " + std::to_string(code) + ")";
}

struct Source {
  std::string ptx;
  std::string entry;
};

std::mutex table_mutex;
std::map<int64_t, Source> sources;  // by content key
std::map<std::pair<CUcontext, int64_t>, CUfunction> loaded;  // one module per (context, key)

// Makes `ctx` current for this scope unless it already is.
class ScopedContext {
 public:
  ScopedContext(const Driver& d, CUcontext ctx) : d_(d) {
    CUcontext current = nullptr;
    d_.ctxGetCurrent(&current);
    if (current != ctx) pushed_ = d_.ctxPushCurrent(ctx) == 0;
  }
  ~ScopedContext() {
    CUcontext popped = nullptr;
    if (pushed_) d_.ctxPopCurrent(&popped);
  }

 private:
  const Driver& d_;
  bool pushed_ = false;
};

ffi::ErrorOr<CUfunction> Function(const Driver& d, CUcontext ctx, int64_t key, int64_t shared_mem) {
  std::lock_guard<std::mutex> lock(table_mutex);
  auto found = loaded.find({ctx, key});
  if (found != loaded.end()) return found->second;
  auto source = sources.find(key);
  if (source == sources.end()) {
    return ffi::Unexpected(ffi::Error::Internal(
        "numba_cuda: kernel module " + std::to_string(key) + " was never registered in this process; "
        "executables that call numba_cuda kernels must be traced in the process that runs them."));
  }
  ScopedContext scope(d, ctx);
  CUmodule module = nullptr;
  CUresult r = d.moduleLoadData(&module, source->second.ptx.c_str());
  if (r != 0) {
    return ffi::Unexpected(ffi::Error::Internal(
        "numba_cuda: the CUDA driver could not load the PTX of " + source->second.entry + ": " +
        DriverMessage(d, r) + ". A driver older than the PTX numba-cuda wrote cannot load it: update the "
        "driver, or build for this GPU (EVENTJAX_CUDA_ARCH)."));
  }
  CUfunction fn = nullptr;
  r = d.moduleGetFunction(&fn, module, source->second.entry.c_str());
  if (r != 0) {
    return ffi::Unexpected(ffi::Error::Internal("numba_cuda: the PTX has no kernel " + source->second.entry +
                                                ": " + DriverMessage(d, r)));
  }
  if (shared_mem > kDefaultSharedLimit) {
    r = d.funcSetAttribute(fn, kMaxDynamicSharedBytes, static_cast<int>(shared_mem));
    if (r != 0) {
      return ffi::Unexpected(ffi::Error::Internal("numba_cuda: cannot grant " + std::to_string(shared_mem) +
                                                  " bytes of shared memory: " + DriverMessage(d, r)));
    }
  }
  loaded.emplace(std::make_pair(ctx, key), fn);
  return fn;
}

// Appends the fields numba's kernel ABI gives one C-contiguous array.
void PackArray(const ffi::AnyBuffer& b, std::vector<int64_t>* words) {
  auto dims = b.dimensions();
  const int64_t itemsize = static_cast<int64_t>(ffi::ByteWidth(b.element_type()));
  int64_t nitems = 1;
  for (int64_t d : dims) nitems *= d;
  words->push_back(0);  // meminfo
  words->push_back(0);  // parent
  words->push_back(nitems);
  words->push_back(itemsize);
  words->push_back(static_cast<int64_t>(reinterpret_cast<uintptr_t>(b.untyped_data())));
  for (int64_t d : dims) words->push_back(d);
  const size_t first_stride = words->size();
  words->resize(first_stride + dims.size());
  int64_t stride = itemsize;
  for (size_t i = dims.size(); i-- > 0;) {
    (*words)[first_stride + i] = stride;
    stride *= dims[i];
  }
}

ffi::Error Launch(CUstream stream, ffi::RemainingArgs args, ffi::RemainingRets rets, int64_t module,
                  ffi::Span<const int64_t> grid, ffi::Span<const int64_t> block, int64_t shared_mem,
                  int64_t zero_mask) {
  const Driver& d = GetDriver();
  if (!d.problem.empty()) return ffi::Error::Internal("numba_cuda: " + d.problem);
  if (grid.size() != 3 || block.size() != 3) {
    return ffi::Error::InvalidArgument("numba_cuda: grid and block must have 3 entries each");
  }
  CUcontext ctx = nullptr;
  CUresult r = d.streamGetCtx(stream, &ctx);
  if (r != 0) return ffi::Error::Internal("numba_cuda: cannot find the context of XLA's stream: " +
                                          DriverMessage(d, r));
  ffi::ErrorOr<CUfunction> fn = Function(d, ctx, module, shared_mem);
  if (fn.has_error()) return fn.error();

  // Words of every parameter, then a pointer to each: numba passes all array fields as 64-bit values.
  thread_local std::vector<int64_t> words;
  thread_local std::vector<void*> params;
  words.clear();
  for (size_t i = 0; i < args.size(); ++i) {
    ffi::ErrorOr<ffi::AnyBuffer> b = args.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    PackArray(*b, &words);
  }
  ScopedContext scope(d, ctx);
  for (size_t i = 0; i < rets.size(); ++i) {
    ffi::ErrorOr<ffi::Result<ffi::AnyBuffer>> b = rets.get<ffi::AnyBuffer>(i);
    if (b.has_error()) return b.error();
    PackArray(**b, &words);
    // Outputs arrive uninitialised; the ones the caller asked to zero (never an aliased input) are cleared here.
    if (i < 63 && ((zero_mask >> i) & 1) && (*b)->size_bytes() > 0) {
      r = d.memsetD8Async(reinterpret_cast<CUdeviceptr>((*b)->untyped_data()), 0, (*b)->size_bytes(), stream);
      if (r != 0) return ffi::Error::Internal("numba_cuda: cannot zero output " + std::to_string(i) + ": " +
                                              DriverMessage(d, r));
    }
  }
  for (int64_t g : grid) if (g <= 0) return ffi::Error::Success();  // nothing to launch
  for (int64_t t : block) if (t <= 0) return ffi::Error::Success();
  params.resize(words.size());
  for (size_t i = 0; i < words.size(); ++i) params[i] = &words[i];
  r = d.launchKernel(*fn, static_cast<unsigned>(grid[0]), static_cast<unsigned>(grid[1]),
                     static_cast<unsigned>(grid[2]), static_cast<unsigned>(block[0]),
                     static_cast<unsigned>(block[1]), static_cast<unsigned>(block[2]),
                     static_cast<unsigned>(shared_mem), stream, params.data(), nullptr);
  if (r != 0) return ffi::Error::Internal("numba_cuda: kernel launch failed: " + DriverMessage(d, r));
  return ffi::Error::Success();
}

}  // namespace

// Registers a kernel's PTX under `key` (called from Python at trace time; the same key means the same PTX).
extern "C" int eventjax_numba_cuda_add_module(int64_t key, const char* ptx, const char* entry) {
  std::lock_guard<std::mutex> lock(table_mutex);
  sources.emplace(key, Source{ptx, entry});
  return static_cast<int>(sources.size());
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_numba_cuda_launch, Launch,
                              ffi::Ffi::Bind()
                                  .Ctx<ffi::PlatformStream<CUstream>>()
                                  .RemainingArgs()
                                  .RemainingRets()
                                  .Attr<int64_t>("module")
                                  .Attr<ffi::Span<const int64_t>>("grid")
                                  .Attr<ffi::Span<const int64_t>>("block")
                                  .Attr<int64_t>("shared_mem")
                                  .Attr<int64_t>("zero_mask"));

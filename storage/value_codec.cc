#include "storage/value_codec.h"

#include <zstd.h>

namespace uvsched {

namespace {
enum Tag : char { kRaw = 0, kZstd = 1 };
}  // namespace

struct ValueCodec::Zstd {
  ZSTD_CCtx* cctx = nullptr;
  ZSTD_DCtx* dctx = nullptr;
  ZSTD_CDict* cdict = nullptr;
  ZSTD_DDict* ddict = nullptr;
  ~Zstd() {
    ZSTD_freeCCtx(cctx);
    ZSTD_freeDCtx(dctx);
    ZSTD_freeCDict(cdict);
    ZSTD_freeDDict(ddict);
  }
};

ValueCodec::ValueCodec(std::string dictionary) : dictionary_(std::move(dictionary)), zstd_(std::make_unique<Zstd>()) {}

// zstd's contexts are made when first used, not with the codec: a dictionary
// compressor is ~0.5 MiB of zstd's code and tables that a daemon which has
// stored nothing (or only reads, while it recovers) does not need.
ZSTD_CCtx* ValueCodec::compressor() {
  if (!zstd_->cctx) {
    zstd_->cctx = ZSTD_createCCtx();
    if (!dictionary_.empty()) zstd_->cdict = ZSTD_createCDict(dictionary_.data(), dictionary_.size(), kLevel);
    // The frame keeps its content size (unpack sizes its buffer from it) but
    // neither a checksum (the log's records carry CRCs) nor a dictionary id.
    ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_compressionLevel, kLevel);
    ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_contentSizeFlag, 1);
    ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_checksumFlag, 0);
    ZSTD_CCtx_setParameter(zstd_->cctx, ZSTD_c_dictIDFlag, 0);
  }
  return zstd_->cctx;
}

ZSTD_DCtx* ValueCodec::decompressor() {
  if (!zstd_->dctx) {
    zstd_->dctx = ZSTD_createDCtx();
    if (!dictionary_.empty()) zstd_->ddict = ZSTD_createDDict(dictionary_.data(), dictionary_.size());
  }
  return zstd_->dctx;
}

ValueCodec::~ValueCodec() = default;

std::string ValueCodec::pack(std::string_view value) {
  std::string out;
  if (value.size() >= kMinPackedSize) {
    out.resize(1 + ZSTD_compressBound(value.size()));
    out[0] = kZstd;
    ZSTD_CCtx* cctx = compressor();
    if (zstd_->cdict) ZSTD_CCtx_refCDict(cctx, zstd_->cdict);
    size_t n = ZSTD_compress2(cctx, out.data() + 1, out.size() - 1, value.data(), value.size());
    if (!ZSTD_isError(n) && n < value.size()) {
      out.resize(1 + n);  // callers copy it into the store's block: no need to shrink it
      return out;
    }
  }
  out.assign(1, kRaw);
  out.append(value);
  return out;
}

std::string ValueCodec::raw(std::string_view value) {
  std::string out;
  out.reserve(1 + value.size());
  out.push_back(kRaw);
  out.append(value);
  return out;
}

bool ValueCodec::unpack(std::string_view packed, std::string* value) {
  value->clear();
  if (packed.empty()) return false;
  if (packed[0] == kRaw) {
    value->assign(packed.substr(1));
    return true;
  }
  if (packed[0] != kZstd) return false;
  unsigned long long n = ZSTD_getFrameContentSize(packed.data() + 1, packed.size() - 1);
  if (n == ZSTD_CONTENTSIZE_ERROR || n == ZSTD_CONTENTSIZE_UNKNOWN || n > (1ull << 32)) return false;
  value->resize(static_cast<size_t>(n));
  ZSTD_DCtx* dctx = decompressor();
  size_t got = zstd_->ddict
                   ? ZSTD_decompress_usingDDict(dctx, value->data(), value->size(), packed.data() + 1,
                                                packed.size() - 1, zstd_->ddict)
                   : ZSTD_decompressDCtx(dctx, value->data(), value->size(), packed.data() + 1, packed.size() - 1);
  if (ZSTD_isError(got) || got != n) {
    value->clear();
    return false;
  }
  return true;
}

}  // namespace uvsched

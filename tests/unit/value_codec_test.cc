#include "storage/value_codec.h"

#include <gtest/gtest.h>

#include <string>

namespace uvsched {
namespace {

const std::string kPod =
    R"({"kind":"Pod","apiVersion":"v1","metadata":{"name":"web-1","namespace":"default","labels":{"app":"web"}},)"
    R"("spec":{"containers":[{"name":"c","image":"nginx","resources":{"requests":{"cpu":"250m","memory":"64Mi"}}}]}})";

TEST(ValueCodec, PacksAValueSmallerAndUnpacksItWithOrWithoutADictionary) {
  for (const std::string& dictionary : {std::string(), kPod}) {
    ValueCodec codec(dictionary);
    std::string other = kPod;
    other.replace(other.find("web-1"), 5, "web-2");
    std::string packed = codec.pack(other);
    EXPECT_FALSE(ValueCodec::is_raw(packed));
    EXPECT_LT(packed.size(), other.size());
    std::string value;
    ASSERT_TRUE(codec.unpack(packed, &value));
    EXPECT_EQ(value, other);
  }
}

TEST(ValueCodec, KeepsASmallValueRaw) {
  ValueCodec codec(kPod);
  std::string packed = codec.pack("small");
  EXPECT_TRUE(ValueCodec::is_raw(packed));
  std::string value;
  ASSERT_TRUE(codec.unpack(packed, &value));
  EXPECT_EQ(value, "small");
  ASSERT_TRUE(codec.unpack(ValueCodec::raw(kPod), &value));
  EXPECT_EQ(value, kPod);
}

// Its contexts are made when first used: a codec that has packed nothing (a
// store recovering) unpacks what another with the same dictionary packed.
TEST(ValueCodec, ACodecThatNeverPackedUnpacksAnothersValues) {
  ValueCodec packer(kPod);
  std::string packed = packer.pack(kPod + " ");
  ValueCodec reader(kPod);
  std::string value;
  ASSERT_TRUE(reader.unpack(packed, &value));
  EXPECT_EQ(value, kPod + " ");
  EXPECT_EQ(reader.pack(kPod), packer.pack(kPod)) << "and then packs as the other does";
}

TEST(ValueCodec, RefusesWhatItDidNotPack) {
  ValueCodec codec(kPod);
  std::string value = "left over";
  EXPECT_FALSE(codec.unpack("", &value));
  EXPECT_FALSE(codec.unpack(std::string("\x07"
                                        "abc",
                                        4),
                            &value));
  EXPECT_FALSE(codec.unpack(std::string("\x01"
                                        "not a zstd frame",
                                        17),
                            &value));
  std::string packed = codec.pack(kPod);
  EXPECT_FALSE(codec.unpack(packed.substr(0, packed.size() / 2), &value)) << "truncated";
  EXPECT_TRUE(value.empty());
}

}  // namespace
}  // namespace uvsched

// TlsSession driven back to back in memory: handshake, data both ways,
// hostname and CA verification, client certificates.
#include "reactor/tls.h"

#include <gtest/gtest.h>
#include <openssl/ssl.h>

#include "tests/support/test_certs.h"

namespace uvsched {
namespace {

using test::TestCerts;

struct Pair {
  TlsSession client;
  TlsSession server;
  std::string to_server, to_client;  // ciphertext in flight
  std::string client_plain, server_plain;

  Pair(const TlsContext& cctx, const TlsContext& sctx, std::string_view host) : client(cctx, host), server(sctx) {}

  // Moves ciphertext until neither side has anything to say; false on a failure.
  bool pump() {
    for (int i = 0; i < 20 && !(to_server.empty() && to_client.empty()); ++i) {
      std::string a = std::move(to_server), b = std::move(to_client);
      to_server.clear();
      to_client.clear();
      if (!server.receive(a, &server_plain, &to_client)) return false;
      if (!client.receive(b, &client_plain, &to_server)) return false;
    }
    return true;
  }
};

class Tls : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.ok());
    std::string err;
    server_ = TlsContext::server(certs_.server_cert(), certs_.server_key(), certs_.ca_file(), &err);
    ASSERT_TRUE(server_) << err;
    client_ = TlsContext::client(certs_.ca_file(), &err);
    ASSERT_TRUE(client_) << err;
  }
  TestCerts certs_;
  std::unique_ptr<TlsContext> server_, client_;
};

TEST_F(Tls, HandshakeThenDataBothWaysIncludingWhatWasSentEarly) {
  Pair p(*client_, *server_, "127.0.0.1");
  ASSERT_TRUE(p.client.send("GET / HTTP/1.1\r\n\r\n", &p.to_server));  // held until the handshake ends
  EXPECT_TRUE(p.to_server.empty());
  ASSERT_TRUE(p.client.start(&p.to_server));
  EXPECT_FALSE(p.to_server.empty());
  ASSERT_TRUE(p.pump()) << p.client.error() << p.server.error();
  EXPECT_TRUE(p.client.handshake_done());
  EXPECT_TRUE(p.server.handshake_done());
  EXPECT_EQ(p.server_plain, "GET / HTTP/1.1\r\n\r\n");
  EXPECT_EQ(p.server.peer_name(), "");  // no client certificate
  std::string big(200'000, 'x');
  ASSERT_TRUE(p.server.send(big, &p.to_client));
  ASSERT_TRUE(p.pump());
  EXPECT_EQ(p.client_plain, big);
}

// A session ending in good order says so (close_notify), so a peer can tell
// the end of the data from a cut; before the handshake there is none to say.
TEST_F(Tls, AnOrderlyCloseSendsCloseNotify) {
  Pair p(*client_, *server_, "127.0.0.1");
  std::string none;
  EXPECT_FALSE(p.server.close_notify(&none));
  EXPECT_TRUE(none.empty());
  ASSERT_TRUE(p.client.start(&p.to_server));
  ASSERT_TRUE(p.pump()) << p.client.error() << p.server.error();
  ASSERT_TRUE(p.server.send("last words", &p.to_client));
  ASSERT_TRUE(p.server.close_notify(&p.to_client));
  EXPECT_FALSE(p.client.peer_closed());
  ASSERT_TRUE(p.pump()) << p.client.error();
  EXPECT_EQ(p.client_plain, "last words");
  EXPECT_TRUE(p.client.peer_closed());
}

TEST_F(Tls, CiphertextArrivingOneByteAtATimeStillDecrypts) {
  Pair p(*client_, *server_, "localhost");
  ASSERT_TRUE(p.client.start(&p.to_server));
  ASSERT_TRUE(p.pump());
  ASSERT_TRUE(p.client.send("hello", &p.to_server));
  for (char c : p.to_server) ASSERT_TRUE(p.server.receive(std::string_view(&c, 1), &p.server_plain, &p.to_client));
  EXPECT_EQ(p.server_plain, "hello");
}

TEST_F(Tls, ClientRefusesAServerCertificateForAnotherName) {
  Pair p(*client_, *server_, "other.example");
  ASSERT_TRUE(p.client.start(&p.to_server));
  EXPECT_FALSE(p.pump());
  EXPECT_NE(p.client.error().find("certificate"), std::string::npos) << p.client.error();
}

TEST_F(Tls, ClientRefusesAServerSignedByAnUntrustedCa) {
  std::string err;
  auto stranger_trusting = TlsContext::client(certs_.stranger_ca_file(), &err);
  ASSERT_TRUE(stranger_trusting) << err;
  Pair p(*stranger_trusting, *server_, "127.0.0.1");
  ASSERT_TRUE(p.client.start(&p.to_server));
  EXPECT_FALSE(p.pump());
  EXPECT_FALSE(p.client.handshake_done());
}

TEST_F(Tls, ServerNamesAVerifiedClientCertificateAndRefusesAForgedOne) {
  std::string cert = certs_.client_cert("node-1");
  std::string forged = certs_.client_cert("node-2", true);
  auto with_cert = [&](const std::string& path) {
    std::string err;
    auto ctx = TlsContext::client(certs_.ca_file(), &err);
    EXPECT_TRUE(ctx) << err;
    std::string key = path.substr(0, path.size() - 4) + "-key.pem";
    EXPECT_EQ(SSL_CTX_use_certificate_file(ctx->native(), path.c_str(), 1), 1);
    EXPECT_EQ(SSL_CTX_use_PrivateKey_file(ctx->native(), key.c_str(), 1), 1);
    return ctx;
  };
  auto good = with_cert(cert);
  Pair ok(*good, *server_, "127.0.0.1");
  ASSERT_TRUE(ok.client.start(&ok.to_server));
  ASSERT_TRUE(ok.pump()) << ok.server.error();
  EXPECT_EQ(ok.server.peer_name(), "node-1");

  auto bad = with_cert(forged);
  Pair refused(*bad, *server_, "127.0.0.1");
  ASSERT_TRUE(refused.client.start(&refused.to_server));
  EXPECT_FALSE(refused.pump());
  EXPECT_FALSE(refused.server.error().empty());
}

TEST(TlsContext, MissingOrMismatchedFilesAreClearErrors) {
  TestCerts certs;
  std::string err;
  EXPECT_FALSE(TlsContext::server("/nonexistent.pem", certs.server_key(), "", &err));
  EXPECT_NE(err.find("--tls-cert /nonexistent.pem"), std::string::npos) << err;
  std::string client = certs.client_cert("x");
  std::string client_key = client.substr(0, client.size() - 4) + "-key.pem";
  EXPECT_FALSE(TlsContext::server(certs.server_cert(), client_key, "", &err));
  EXPECT_NE(err.find("--tls-key"), std::string::npos) << err;  // "key values mismatch"
  EXPECT_FALSE(TlsContext::client("/nonexistent-ca.pem", &err));
}

TEST(TlsSession, GarbageFromThePeerFailsWithoutCrashing) {
  TestCerts certs;
  std::string err;
  auto server = TlsContext::server(certs.server_cert(), certs.server_key(), "", &err);
  ASSERT_TRUE(server) << err;
  TlsSession s(*server);
  std::string plain, out;
  EXPECT_FALSE(s.receive("GET / HTTP/1.1\r\nHost: x\r\n\r\n", &plain, &out));
  EXPECT_TRUE(plain.empty());
  EXPECT_FALSE(s.receive("more", &plain, &out));  // stays failed
}

}  // namespace
}  // namespace uvsched

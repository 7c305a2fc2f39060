// A throw-away PKI for TLS tests: a CA, a server certificate for 127.0.0.1,
// ::1 and localhost, and client certificates, made with OpenSSL's API and
// written as PEM files to a temporary directory removed on destruction.
#pragma once

#include <string>
#include <vector>

namespace uvsched::test {

class TestCerts {
 public:
  TestCerts();
  ~TestCerts();
  TestCerts(const TestCerts&) = delete;
  TestCerts& operator=(const TestCerts&) = delete;

  bool ok() const { return ok_; }
  const std::string& dir() const { return dir_; }
  std::string ca_file() const { return dir_ + "/ca.pem"; }
  std::string server_cert() const { return dir_ + "/server.pem"; }
  std::string server_key() const { return dir_ + "/server-key.pem"; }
  // A client certificate with this common name, signed by the same CA unless
  // by_stranger, in which case a CA nobody trusts signed it. Returns the cert path;
  // the key is beside it with "-key" before ".pem".
  // clientAuth; serverAuth only; no extended key usage at all; CA:TRUE with clientAuth
  enum class ClientKind { kAgent, kServerOnly, kNoUsage, kCa };
  std::string client_cert(const std::string& common_name, bool by_stranger = false,
                          ClientKind kind = ClientKind::kAgent);
  // A CRL from the CA revoking these client certificates (paths as
  // client_cert returned them; none: a CRL that revokes nothing), written to
  // `name` in the directory. Returns its path.
  std::string crl_file(const std::string& name, const std::vector<std::string>& revoked_certs);
  // A second CA nobody trusts.
  std::string stranger_ca_file() const { return dir_ + "/stranger-ca.pem"; }

 private:
  std::string dir_;
  bool ok_ = false;
  struct Pki;
  Pki* pki_ = nullptr;
};

}  // namespace uvsched::test

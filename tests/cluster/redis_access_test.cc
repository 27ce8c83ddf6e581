// A node's way into a Redis as it is sold (cluster/redis_access.h): a password, an ACL user
// with only the rights docs/cluster.md lists, TLS with and without a client certificate; and
// each refusal named at once (a wrong password, AUTH demanded, a certificate that does not
// verify), never with the password in it. Real redis-servers (Debian's has TLS built in),
// certificates made by `openssl` in a temporary directory.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>

#include "tests/cluster/cluster_fixture.h"

namespace anteroom::testing {
namespace {

namespace fs = std::filesystem;
constexpr char kPassword[] = "pw-never-shown-8c1f";

// A CA, a server certificate for 127.0.0.1 and localhost, a client certificate, and a
// second CA that signed none of them.
class Certificates {
 public:
  Certificates() {
    std::string d = (fs::temp_directory_path() / "anteroom-tls-XXXXXX").string();
    if (mkdtemp(d.data()) == nullptr) return;
    dir_ = d;
    std::ofstream(dir_ + "/ext") << "subjectAltName=IP:127.0.0.1,DNS:localhost\n";
    std::ofstream(dir_ + "/elsewhere") << "subjectAltName=DNS:redis.elsewhere.example\n";
    const std::string q = "cd '" + dir_ + "' && ";
    const char* key = "-newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes";
    ok_ = run(q + "openssl req -x509 " + key +
              " -keyout ca.key -out ca.crt -subj /CN=test-ca -days 2") &&
          run(q + "openssl req -x509 " + key +
              " -keyout other.key -out other.crt -subj /CN=other -days 2") &&
          run(q + "openssl req " + key + " -keyout server.key -out server.csr -subj /CN=redis") &&
          run(q +
              "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
              "-extfile ext -out server.crt") &&
          run(q +
              "openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
              "-extfile elsewhere -out elsewhere.crt") &&
          run(q + "openssl req " + key + " -keyout client.key -out client.csr -subj /CN=node") &&
          run(q +
              "openssl x509 -req -in client.csr -CA ca.crt -CAkey ca.key -CAcreateserial -days 2 "
              "-out client.crt");
  }
  ~Certificates() {
    if (!dir_.empty()) fs::remove_all(dir_);
  }
  bool ok() const { return ok_; }
  std::string operator[](const char* name) const { return dir_ + "/" + name; }

 private:
  static bool run(const std::string& cmd) {
    return std::system((cmd + " >/dev/null 2>&1").c_str()) == 0;
  }
  std::string dir_;
  bool ok_ = false;
};

const Certificates& certificates() {
  static const Certificates c;
  return c;
}

std::shared_ptr<const cluster::RedisAccess> access(std::string user, std::string password,
                                                   bool tls = false,
                                                   const cluster::RedisTlsFiles& files = {}) {
  auto a = cluster::RedisAccess::make(std::move(user), std::move(password), tls, files);
  EXPECT_TRUE(a.is_ok()) << a.status().message();
  return a.is_ok() ? a.value() : nullptr;
}

// A cluster test whose nodes reach Redis with `access_`; the Redis gets redis_args().
class AccessTest : public ClusterTest {
 protected:
  // Opens a node with access_; its error, or "" once it joined (and then a join and an
  // admission through it proved the rights it needs).
  std::string try_node(const std::string& name) {
    cluster::ClusterOptions o = options(name);
    o.access = access_;
    auto n = cluster::open_cluster_engine(o, engine_options());
    if (!n.is_ok()) return n.status().message();
    nodes_.push_back(std::move(n.value()));
    return "";
  }
  void join_and_admit_through_both() {
    ASSERT_EQ(try_node("n1"), "");
    ASSERT_EQ(try_node("n2"), "");
    ASSERT_TRUE(nodes_[0]->put_room("r", config(0, AdmissionMode::kManual)).is_ok());
    catch_up();
    auto t = nodes_[1]->join("r", "");
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    catch_up();
    auto admitted = nodes_[0]->admit("r", 1);
    ASSERT_TRUE(admitted.is_ok()) << admitted.status().message();
    EXPECT_EQ(admitted.value(), 1u);
    catch_up();
    EXPECT_EQ(same_everywhere("r", std::string(id_view(t->ticket.id))).state,
              TicketState::kAllowed);
  }
  std::shared_ptr<const cluster::RedisAccess> access_;
};

class PasswordTest : public AccessTest {
  std::vector<std::string> redis_args() override { return {"--requirepass", kPassword}; }
};

TEST_F(PasswordTest, TheRightPasswordJoinsAndAdmits) {
  access_ = access("", kPassword);
  join_and_admit_through_both();
}

TEST_F(PasswordTest, AWrongPasswordIsRefusedAtOnceWithoutShowingIt) {
  access_ = access("", "not-the-password");
  const auto start = std::chrono::steady_clock::now();
  const std::string why = try_node("n1");
  EXPECT_NE(why.find("refused AUTH"), std::string::npos) << why;
  EXPECT_EQ(why.find("not-the-password"), std::string::npos) << why;
  // At once: not after the start's time-out (3 s in the fixture).
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::milliseconds(2500));
}

TEST_F(PasswordTest, ANodeWithoutAPasswordIsToldRedisDemandsOne) {
  access_ = nullptr;
  const std::string why = try_node("n1");
  EXPECT_NE(why.find("demands AUTH"), std::string::npos) << why;
}

// docs/cluster.md's ACL SETUSER line, run as written (with the password put in), and the
// default user switched off: a node under that user alone does a cluster's whole work.
class AclTest : public AccessTest {
 protected:
  void SetUp() override {
    AccessTest::SetUp();
    std::ifstream doc(std::string(ANTEROOM_SOURCE_DIR) + "/docs/cluster.md");
    std::string line;
    std::smatch m;
    const std::regex acl("^ *redis-cli (ACL SETUSER anteroom .*)$");
    while (std::getline(doc, line) && !std::regex_match(line, m, acl)) {
    }
    ASSERT_FALSE(m.empty()) << "docs/cluster.md has no `redis-cli ACL SETUSER anteroom` line";
    std::string setuser =
        std::regex_replace(m[1].str(), std::regex(">PASSWORD"), std::string(">") + kPassword);
    const std::string cli = "redis-cli -p " + std::to_string(redis_->port()) + " ";
    ASSERT_EQ(std::system((cli + setuser + " >/dev/null").c_str()), 0);
    ASSERT_EQ(std::system((cli + "ACL SETUSER default off >/dev/null").c_str()), 0);
  }
};

TEST_F(AclTest, TheDocumentedUserIsEnough) {
  access_ = access("anteroom", kPassword);
  join_and_admit_through_both();
}

TEST_F(AclTest, AnotherUserIsRefused) {
  access_ = access("someone", kPassword);
  const std::string why = try_node("n1");
  EXPECT_NE(why.find("refused AUTH"), std::string::npos) << why;
  EXPECT_EQ(why.find(kPassword), std::string::npos) << why;
}

class TlsTest : public AccessTest {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certificates().ok()) << "openssl could not make the test certificates";
    AccessTest::SetUp();
  }
  std::vector<std::string> redis_args() override {
    const Certificates& c = certificates();
    return {"--port",
            "0",
            "--tls-port",
            "{port}",
            "--tls-cert-file",
            c["server.crt"],
            "--tls-key-file",
            c["server.key"],
            "--tls-ca-cert-file",
            c["ca.crt"],
            "--tls-auth-clients",
            client_certificates()};
  }
  virtual std::string client_certificates() { return "no"; }
};

TEST_F(TlsTest, TheServersCertificateUnderItsCaJoinsAndAdmits) {
  access_ = access("", "", true, {certificates()["ca.crt"], "", ""});
  join_and_admit_through_both();
}

TEST_F(TlsTest, AnotherCaIsRefusedWithAClearMessage) {
  access_ = access("", "", true, {certificates()["other.crt"], "", ""});
  const std::string why = try_node("n1");
  EXPECT_NE(why.find("does not verify"), std::string::npos) << why;
}

// A certificate under the right CA for another host: the host name check refuses it.
class OtherHostTest : public TlsTest {
  std::vector<std::string> redis_args() override {
    std::vector<std::string> args = TlsTest::redis_args();
    for (auto& a : args) {
      if (a == certificates()["server.crt"]) a = certificates()["elsewhere.crt"];
    }
    return args;
  }
};

TEST_F(OtherHostTest, ACertificateForAnotherHostIsRefused) {
  access_ = access("", "", true, {certificates()["ca.crt"], "", ""});
  const std::string why = try_node("n1");
  EXPECT_NE(why.find("does not verify"), std::string::npos) << why;
}

class ClientCertificateTest : public TlsTest {
  std::string client_certificates() override { return "yes"; }
};

TEST_F(ClientCertificateTest, ANodeWithItsCertificateJoinsAndAdmits) {
  const Certificates& c = certificates();
  access_ = access("", "", true, {c["ca.crt"], c["client.crt"], c["client.key"]});
  join_and_admit_through_both();
}

TEST_F(ClientCertificateTest, ANodeWithoutOneIsNotLetIn) {
  access_ = access("", "", true, {certificates()["ca.crt"], "", ""});
  EXPECT_NE(try_node("n1"), "");
}

TEST(RedisAccessMake, NamesTheFileThatDoesNotRead) {
  auto a = cluster::RedisAccess::make("", "", true, {"/nonexistent/ca.pem", "", ""});
  ASSERT_FALSE(a.is_ok());
  EXPECT_EQ(a.status().message(), "--redis-tls-ca /nonexistent/ca.pem: cannot be read");
  auto b = cluster::RedisAccess::make("", "", true, {"", "/some/cert.pem", ""});
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().message(), "--redis-tls-cert and --redis-tls-key go together");
  auto c = cluster::RedisAccess::make("", "", false, {"/some/ca.pem", "", ""});
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("need rediss://"), std::string::npos);
  // A file that is there but not a certificate.
  auto d = cluster::RedisAccess::make("", "", true, {certificates()["ext"], "", ""});
  ASSERT_FALSE(d.is_ok());
  EXPECT_NE(d.status().message().find("not PEM certificates"), std::string::npos);
}

}  // namespace
}  // namespace anteroom::testing

# `cmake --install` and `cpack -G DEB` (docs/operating.md).
#
# Layout under the prefix: bin/anteroom and bin/anteroom-loadgen; share/doc/anteroom/ (the
# README, docs/ and, in examples/, deploy/'s nginx, Prometheus and Grafana files);
# lib/systemd/system/anteroom.service; the example configuration as
# etc/anteroom/anteroom.conf and the access log's rotation (deploy/logrotate/anteroom) as
# etc/logrotate.d/anteroom, which are under /etc when the prefix is /usr (as in the .deb).
# The unit, the configuration and the rotation are placed by
# cmake/install_service.cmake at install time, when the prefix is known: the unit names the
# installed binary and configuration.
include(GNUInstallDirs)

install(TARGETS anteroom RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
if(TARGET anteroom-loadgen)
  install(TARGETS anteroom-loadgen RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
endif()

install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
install(DIRECTORY docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}
        FILES_MATCHING PATTERN "*.md" PATTERN "*.yaml")
foreach(dir nginx prometheus grafana)
  if(EXISTS ${PROJECT_SOURCE_DIR}/deploy/${dir})
    install(DIRECTORY deploy/${dir} DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
  endif()
endforeach()

# deploy/anteroom.conf, the commented example configuration (--config): in the examples, and
# as the configuration the unit reads (cmake/install_service.cmake).
set(ANTEROOM_EXAMPLE_CONFIG ${PROJECT_SOURCE_DIR}/deploy/anteroom.conf)
install(FILES ${ANTEROOM_EXAMPLE_CONFIG} DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
install(CODE "
  set(ANTEROOM_UNIT \"${PROJECT_SOURCE_DIR}/deploy/systemd/anteroom.service\")
  set(ANTEROOM_EXAMPLE_CONFIG \"${ANTEROOM_EXAMPLE_CONFIG}\")
  set(ANTEROOM_LOGROTATE \"${PROJECT_SOURCE_DIR}/deploy/logrotate/anteroom\")
  set(ANTEROOM_STAGING \"${PROJECT_BINARY_DIR}/install-staging\")
  set(ANTEROOM_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  set(ANTEROOM_DOCDIR \"${CMAKE_INSTALL_DOCDIR}\")")
install(SCRIPT cmake/install_service.cmake)

# The Debian package: `cpack -G DEB` in the build directory.
set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME anteroom)
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "virtual waiting room in front of a web service")
set(CPACK_PACKAGE_DESCRIPTION "anteroom gives every visitor an ordered ticket, shows their \
place in line and lets them in only as fast as the service behind it can take them.")
set(ANTEROOM_DEB_MAINTAINER "anteroom maintainers <root@localhost>" CACHE STRING
    "Maintainer field of the .deb")
set(CPACK_PACKAGE_CONTACT "${ANTEROOM_DEB_MAINTAINER}")
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # anteroom_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION net)
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "redis-server, nginx, prometheus")
find_program(ANTEROOM_DPKG_SHLIBDEPS dpkg-shlibdeps)
if(ANTEROOM_DPKG_SHLIBDEPS)
  set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends from the libraries the binaries link
else()
  # What dpkg-shlibdeps finds on Debian 12 (dpkg-dev is missing here).
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "libboost-json1.81.0, libboost-program-options1.81.0, libc6 (>= 2.34), libgcc-s1 (>= 3.0), \
libhiredis0.14 (>= 0.14.0), libssl3 (>= 3.0.0), libstdc++6 (>= 12)")
endif()
set(ANTEROOM_DEB_CONTROL ${PROJECT_SOURCE_DIR}/deploy/debian/postinst
    ${PROJECT_SOURCE_DIR}/deploy/debian/prerm ${PROJECT_SOURCE_DIR}/deploy/debian/postrm)
# dpkg keeps an operator's changes to a conffile across upgrades and asks before replacing it.
file(WRITE ${PROJECT_BINARY_DIR}/deb-control/conffiles
     "/etc/anteroom/anteroom.conf\n/etc/logrotate.d/anteroom\n")
list(APPEND ANTEROOM_DEB_CONTROL ${PROJECT_BINARY_DIR}/deb-control/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA "${ANTEROOM_DEB_CONTROL}")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)

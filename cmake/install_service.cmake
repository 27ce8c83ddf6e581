# Installs the systemd unit, the example configuration and the access log's logrotate file
# (cmake/packaging.cmake sets the ANTEROOM_* variables): run by `cmake --install` and cpack,
# when CMAKE_INSTALL_PREFIX is the prefix installed to. The configuration and the logrotate
# file go to /etc when the prefix is /usr (GNU's rule, which a Debian package follows), else
# to PREFIX/etc; the unit's paths are rewritten to the installed binary and configuration.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(etc "/etc")
else()
  set(etc "${CMAKE_INSTALL_PREFIX}/etc")
endif()
file(READ "${ANTEROOM_UNIT}" unit)
string(REPLACE "/usr/bin/anteroom" "${CMAKE_INSTALL_PREFIX}/${ANTEROOM_BINDIR}/anteroom" unit
               "${unit}")
string(REPLACE "/etc/anteroom/anteroom.conf" "${etc}/anteroom/anteroom.conf" unit "${unit}")
string(REPLACE "/usr/share/doc/anteroom" "${CMAKE_INSTALL_PREFIX}/${ANTEROOM_DOCDIR}" unit
               "${unit}")
# A staging folder per destination: installs to different places may run at once.
string(MD5 destination "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}")
set(staged "${ANTEROOM_STAGING}/${destination}/anteroom.service")
file(WRITE "${staged}" "${unit}")
file(INSTALL DESTINATION "${CMAKE_INSTALL_PREFIX}/lib/systemd/system" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES "${staged}")
file(INSTALL DESTINATION "${etc}/anteroom" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES "${ANTEROOM_EXAMPLE_CONFIG}")
file(INSTALL DESTINATION "${etc}/logrotate.d" TYPE FILE
     PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ FILES "${ANTEROOM_LOGROTATE}")

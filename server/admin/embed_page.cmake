# Embeds an HTML file as a std::string_view (run by the build: cmake -DIN=... -DOUT=... -P).
file(READ "${IN}" content)
file(WRITE "${OUT}" "// Generated from ${IN} by embed_page.cmake; edit the HTML file instead.\n#include \"admin/map_page.hpp\"\n\nnamespace zone::admin {\n\nconst std::string_view kMapPage = R\"zonemap(${content})zonemap\";\n\n}  // namespace zone::admin\n")

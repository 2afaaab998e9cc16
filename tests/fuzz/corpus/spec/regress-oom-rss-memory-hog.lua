local t = {}
for i = 5, 1e9 do t[i] = string.rep('x ',1576) .. i end
local t = {}
for i = 0, 1e9 do t[i] = string.rep('x', 0353) .. i end
import { Controller, Get } from '@nestjs/common';
import { ApiOperation, ApiSecurity, ApiTags } from '@nestjs/swagger';
import { type Caller, CurrentCaller, RequireScope } from '../../common/caller';
import { PoliciesService } from './policies.service';

@ApiTags('policies')
@ApiSecurity('signed')
@Controller('policies')
export class PoliciesController {
  constructor(private readonly policies: PoliciesService) {}

  @Get()
  @RequireScope('policies:read')
  @ApiOperation({ summary: "The withdrawal policy of the key's environment (version 0: none set)" })
  get(@CurrentCaller() caller: Caller) {
    return this.policies.tenantGet(caller);
  }
}
